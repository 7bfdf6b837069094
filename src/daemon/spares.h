/*
 * Spare inodes kept for reuse under hidden names in one folder: what goes
 * (a container's folder, a claim's CDI spec) is renamed aside as
 * <prefix><n>, and renamed into place for the next one. An owner may also
 * make spares ahead of need (spares_make), off the path of an answer.
 * Spares left in the folder by an earlier run are taken back at the first
 * use, each shown to the owner's check first.
 */
#ifndef TOPOAWARE_SPARES_H
#define TOPOAWARE_SPARES_H

#include <stddef.h>

struct spares;

/*
 * check(path, arg) says whether a spare found under the prefix at the
 * first use can serve (1) or not (0, and it removes it if it wants).
 */
typedef int	(*spares_check_fn)(const char *path, void *arg);

struct spares	*spares_new(const char *dir, const char *prefix, size_t cap,
		    spares_check_fn, void *arg);
void		 spares_free(struct spares *);

/*
 * A spare taken off the list: its path (the caller frees it and renames
 * it into place, or removes it), or NULL when there is none.
 */
char		*spares_take(struct spares *);
/*
 * Renames path aside as a spare: its new path (owned by the spares, valid
 * until the next call) when kept, NULL when there are cap spares already
 * or the rename failed (path is then where it was).
 */
const char	*spares_keep(struct spares *, const char *path);
/*
 * make(path, arg) makes a new spare at path: 0, or -1 with errno set.
 * A name that failed is not given again in this run.
 */
typedef int	(*spares_make_fn)(const char *path, void *arg);
/*
 * One spare made ahead of need, under the next name: 0, or -1 when there
 * are cap spares already or make failed.
 */
int		 spares_make(struct spares *, spares_make_fn, void *arg);
/* How many spares there are (after the first use's listing). */
size_t		 spares_count(struct spares *);
/*
 * Takes back now the spares an earlier run left, as the first use would:
 * for an owner whose check must see them at start, not at a first use
 * that may come long after.
 */
void		 spares_reclaim(struct spares *);

#endif
