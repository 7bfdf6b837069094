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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spares.h"
#include "strmap.h"
#include "xmalloc.h"

struct spare_list {
	char	**paths;
	size_t	  n;
};

struct spares {
	char		*dir;
	char		*prefix;
	size_t		 cap;
	spares_check_fn	 check;
	void		*arg;
	struct strmap	*keys;		/* key -> struct spare_list */
	unsigned long	 next;		/* the number of the next name */
	int		 listed;
	char		*last;		/* spares_keep's answer */
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
	sp->keys = strmap_new();
	return (sp);
}

static void
list_free(void *v)
{
	struct spare_list	*l = v;
	size_t			 i;

	for (i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	free(l);
}

void
spares_free(struct spares *sp)
{
	if (sp == NULL)
		return;
	strmap_free_all(sp->keys, list_free);
	free(sp->last);
	free(sp->prefix);
	free(sp->dir);
	free(sp);
}

static struct spare_list *
list_of(struct spares *sp, const char *key)
{
	struct spare_list	*l;

	if ((l = strmap_get(sp->keys, key)) == NULL) {
		l = xcalloc(1, sizeof *l);
		strmap_put(sp->keys, key, l);
	}
	return (l);
}

static void
push(struct spare_list *l, char *path)
{
	l->paths = xreallocarray(l->paths, l->n + 1, sizeof *l->paths);
	l->paths[l->n++] = path;
}

/*
 * A name after the prefix: <n> or <n>.<key>. 0 and *n, *key (within
 * name) when it is one.
 */
static int
parse_name(const char *s, unsigned long *n, const char **key)
{
	const char	*p = s;
	unsigned long	 v = 0;

	if (*p < '0' || *p > '9')
		return (-1);
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (unsigned long)-1 / 10 - 1)
			return (-1);
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (*p == '\0')
		*key = p;
	else if (*p == '.' && p[1] != '\0')
		*key = p + 1;
	else
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
	const char	*key;
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
		    parse_name(de->d_name + plen, &n, &key) != 0)
			continue;
		if (n >= sp->next)
			sp->next = n + 1;
		xasprintf(&path, "%s/%s", sp->dir, de->d_name);
		if (sp->check(path, key, sp->arg))
			push(list_of(sp, key), path);
		else
			free(path);
	}
	closedir(d);
}

char *
spares_take(struct spares *sp, const char *key)
{
	struct spare_list	*l;

	list_once(sp);
	if ((l = strmap_get(sp->keys, key)) == NULL || l->n == 0)
		return (NULL);
	return (l->paths[--l->n]);
}

const char *
spares_keep(struct spares *sp, const char *key, const char *path)
{
	struct spare_list	*l;
	char			*to;

	list_once(sp);
	if (strchr(key, '/') != NULL)
		return (NULL);
	l = list_of(sp, key);
	if (l->n >= sp->cap)
		return (NULL);
	if (*key == '\0')
		xasprintf(&to, "%s/%s%lu", sp->dir, sp->prefix, sp->next);
	else
		xasprintf(&to, "%s/%s%lu.%s", sp->dir, sp->prefix, sp->next,
		    key);
	if (rename(path, to) == -1) {
		free(to);
		return (NULL);
	}
	sp->next++;
	push(l, to);
	free(sp->last);
	sp->last = xstrdup(to);
	return (sp->last);
}

size_t
spares_count(struct spares *sp, const char *key)
{
	struct spare_list	*l;

	list_once(sp);
	return ((l = strmap_get(sp->keys, key)) == NULL ? 0 : l->n);
}
