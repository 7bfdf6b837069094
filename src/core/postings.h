/*
 * A multimap from 64-bit hashes to lists of pointers: the index of what
 * containers' attributes are (index.c). A lookup may return a pointer
 * whose own key only shares the hash, so callers check what they get.
 * Lists of one entry are held in the table itself.
 */
#ifndef TOPOAWARE_POSTINGS_H
#define TOPOAWARE_POSTINGS_H

#include <stddef.h>
#include <stdint.h>

struct postings;

struct postings	*postings_new(void);
void		 postings_free(struct postings *);
void		 postings_add(struct postings *, uint64_t, void *);
/* Removes one occurrence of the pointer under the hash, if there. */
void		 postings_del(struct postings *, uint64_t, void *);
/* The pointers under the hash (valid until the next change). */
void *const	*postings_get(const struct postings *, uint64_t, size_t *);
/* The hash of a tag and up to two strings (either may be NULL), keyed. */
uint64_t	 postings_hash(int, const char *, const char *);
/*
 * Sets the hash's key, which is zero until set: a process whose strings
 * come from others sets a secret one. -1 once any postings exist.
 */
int		 postings_key(uint64_t, uint64_t);
/* SipHash-c-d of len bytes under key k (postings_hash is SipHash-1-3). */
uint64_t	 postings_siphash(const uint64_t k[2], const void *, size_t,
		    int c, int d);

#endif
