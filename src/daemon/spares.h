/*
 * Spare inodes kept for reuse under hidden names in one folder: what goes
 * (a container's link or folder, a claim's CDI spec) is renamed aside,
 * and renamed into place for the next one that needs the same thing.
 *
 * A spare has a key saying what it can serve ("" for one kind only): a
 * link can only serve its own target. Its name is <prefix><n> for the
 * key "", else <prefix><n>.<key>; spares left in the folder by an earlier
 * run are taken back at the first use, each shown to the owner's check
 * first.
 */
#ifndef TOPOAWARE_SPARES_H
#define TOPOAWARE_SPARES_H

#include <stddef.h>

struct spares;

/*
 * check(path, key, arg) says whether a spare found under the prefix at
 * the first use can serve key (1) or not (0, and it removes it if it
 * wants). Keys hold no '/' and are never longer than a file name allows
 * with the prefix.
 */
typedef int	(*spares_check_fn)(const char *path, const char *key,
		    void *arg);

struct spares	*spares_new(const char *dir, const char *prefix,
		    size_t cap_per_key, spares_check_fn, void *arg);
void		 spares_free(struct spares *);

/*
 * A spare for key, taken off the list: its path (the caller frees it and
 * renames it into place, or removes it), or NULL when there is none.
 */
char		*spares_take(struct spares *, const char *key);
/*
 * Renames path aside as a spare for key: its new path (owned by the
 * spares, valid until the next call) when kept, NULL when key has its
 * fill of spares or the rename failed (path is then where it was).
 */
const char	*spares_keep(struct spares *, const char *key,
		    const char *path);
/* How many spares key has (after the first use's listing). */
size_t		 spares_count(struct spares *, const char *key);

#endif
