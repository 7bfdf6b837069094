/*
 * spares.c: inodes kept for reuse (spares.h).
 *
 * Making an inode and freeing it again are the dear part of writing a
 * small file or a link: the file system allocates and frees it, and
 * writes both back (ext4 without a journal even scans past every inode
 * freed in the last minute before it hands one out, so a busy node's
 * churn of containers made each new one dearer). A rename makes and frees
 * nothing; so what goes is renamed aside and serves the next one.
 */
#include "autoconf.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spares.h"
#include "xmalloc.h"

struct spares {
	char		*dir;
	char		*prefix;
	size_t		 cap;
	spares_check_fn	 check;
	void		*arg;
	char		**paths;	/* the spares, the last kept last */
	size_t		 n;
	unsigned long	 next;		/* the number of the next name */
	int		 listed;
};

struct spares *
spares_new(const char *dir, const char *prefix, size_t cap,
    spares_check_fn check, void *arg)
{
	struct spares	*sp = xcalloc(1, sizeof *sp);

	sp->dir = xstrdup(dir);
	sp->prefix = xstrdup(prefix);
	sp->cap = cap;
	sp->check = check;
	sp->arg = arg;
	return (sp);
}

void
spares_free(struct spares *sp)
{
	size_t	i;

	if (sp == NULL)
		return;
	for (i = 0; i < sp->n; i++)
		free(sp->paths[i]);
	free(sp->paths);
	free(sp->prefix);
	free(sp->dir);
	free(sp);
}

static void
push(struct spares *sp, char *path)
{
	sp->paths = xreallocarray(sp->paths, sp->n + 1, sizeof *sp->paths);
	sp->paths[sp->n++] = path;
}

/* The number of a name after the prefix, digits only: 0 and *n. */
static int
parse_name(const char *s, unsigned long *n)
{
	unsigned long	v = 0;

	if (*s == '\0')
		return (-1);
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (unsigned long)-1 / 10 - 1)
			return (-1);
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (*s != '\0')
		return (-1);
	*n = v;
	return (0);
}

/* The spares an earlier run left, once; a folder that cannot be read
 * has none we could use. */
static void
list_once(struct spares *sp)
{
	struct dirent	*de;
	DIR		*d;
	unsigned long	 n;
	size_t		 plen = strlen(sp->prefix);
	char		*path;

	if (sp->listed)
		return;
	sp->listed = 1;
	if ((d = opendir(sp->dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, sp->prefix, plen) != 0 ||
		    parse_name(de->d_name + plen, &n) != 0)
			continue;
		if (n >= sp->next)
			sp->next = n + 1;
		xasprintf(&path, "%s/%s", sp->dir, de->d_name);
		if (sp->check(path, sp->arg))
			push(sp, path);
		else
			free(path);
	}
	closedir(d);
}

char *
spares_take(struct spares *sp)
{
	list_once(sp);
	return (sp->n > 0 ? sp->paths[--sp->n] : NULL);
}

const char *
spares_keep(struct spares *sp, const char *path)
{
	char	*to;

	list_once(sp);
	if (sp->n >= sp->cap)
		return (NULL);
	xasprintf(&to, "%s/%s%lu", sp->dir, sp->prefix, sp->next);
	if (rename(path, to) == -1) {
		free(to);
		return (NULL);
	}
	sp->next++;
	push(sp, to);
	return (to);
}

int
spares_make(struct spares *sp, spares_make_fn make, void *arg)
{
	char	*to;

	list_once(sp);
	if (sp->n >= sp->cap)
		return (-1);
	/* A name that failed is not tried again. */
	xasprintf(&to, "%s/%s%lu", sp->dir, sp->prefix, sp->next++);
	if (make(to, arg) != 0) {
		free(to);
		return (-1);
	}
	push(sp, to);
	return (0);
}

size_t
spares_count(struct spares *sp)
{
	list_once(sp);
	return (sp->n);
}

void
spares_reclaim(struct spares *sp)
{
	list_once(sp);
}
