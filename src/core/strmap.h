/*
 * A string-keyed hash map of pointers, for the policy's containers and
 * claims. Keys are copied (but see strmap_new_borrowing); values are the
 * caller's.
 */
#ifndef TOPOAWARE_STRMAP_H
#define TOPOAWARE_STRMAP_H

#include <stddef.h>

struct strmap;

struct strmap	*strmap_new(void);
/* A map whose keys are copied into blocks it owns, for a set filled and
 * emptied every loop turn: no allocation per key, and a deleted key's
 * bytes stay taken until strmap_reset. */
struct strmap	*strmap_new_pooled(void);
/* A map that keeps the caller's keys, not copies, for objects keyed by
 * a string they hold: each key must stay as it is until its entry is
 * deleted or put again, and a put keeps the key it is given. */
struct strmap	*strmap_new_borrowing(void);
void		 strmap_free(struct strmap *);
/* Empties the map, keeping its table's size and its key blocks. */
void		 strmap_reset(struct strmap *);
/* strmap_free, and each value given to fn first (free, a _free). */
void		 strmap_free_all(struct strmap *, void (*fn)(void *));
void		*strmap_get(const struct strmap *, const char *);
/* Makes room for n entries in all, so that filling the map up to them
 * grows its table no more: a Synchronize knows how many it brings. */
void		 strmap_reserve(struct strmap *, size_t n);
/* Sets key to value, replacing any earlier value. */
void		 strmap_put(struct strmap *, const char *, void *);
/* Puts key with value unless key is there: the map's own copy of key,
 * valid until it is deleted, or NULL when it was there (value kept). */
const char	*strmap_add(struct strmap *, const char *key, void *value);
/* Removes key; returns its value or NULL. */
void		*strmap_del(struct strmap *, const char *);
size_t		 strmap_count(const struct strmap *);
/* Every value, in no particular order, into a new array (caller frees). */
void		**strmap_values(const struct strmap *, size_t *);
/* fn(key, value, arg) for every entry, in no particular order; fn must
 * not change the map. */
void		 strmap_each(const struct strmap *,
		    void (*)(const char *, void *, void *), void *);

#endif
