/*
 * A pool of strings copied into blocks it owns, all given back at once:
 * for the many short strings of one event (the ids of the containers it
 * moved, a queue's keys), which a malloc each would cost more to make and
 * to free than to copy.
 */
#ifndef TOPOAWARE_STRPOOL_H
#define TOPOAWARE_STRPOOL_H

#include <stddef.h>

struct strblock;

/* Embedded by value; all zero is an empty pool owning nothing. */
struct strpool {
	struct strblock	*first;
	struct strblock	*cur;		/* the block being filled */
};

#define STRPOOL_INITIALIZER	{ NULL, NULL }

/* A copy of the len bytes at s, and a NUL; valid until the pool is
 * reset or cleared. */
char	*strpool_copy(struct strpool *, const char *s, size_t len);
char	*strpool_dup(struct strpool *, const char *s);
/* Empties the pool, keeping its blocks for the next copies. */
void	 strpool_reset(struct strpool *);
/* Frees its blocks: an empty pool owning nothing. */
void	 strpool_clear(struct strpool *);

#endif
