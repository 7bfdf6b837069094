/*
 * strpool.c owns the string pool: blocks of STRBLOCK bytes (a longer
 * string gets a block of its own), filled in turn, kept in a list that a
 * reset refills from the first.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "strpool.h"
#include "xmalloc.h"

#define STRBLOCK	8192

struct strblock {
	struct strblock	*next;
	size_t		 size;
	size_t		 used;
	char		 data[];
};

char *
strpool_copy(struct strpool *sp, const char *s, size_t len)
{
	struct strblock	*b, **tail;
	size_t		 size;
	char		*out;

	for (b = sp->cur; b != NULL; b = b->next)
		if (b->size - b->used > len)
			break;
	if (b == NULL) {
		size = len + 1 > STRBLOCK ? len + 1 : STRBLOCK;
		b = xmalloc(sizeof *b + size);
		b->next = NULL;
		b->size = size;
		b->used = 0;
		for (tail = &sp->first; *tail != NULL; tail = &(*tail)->next)
			;
		*tail = b;
	}
	sp->cur = b;
	out = b->data + b->used;
	memcpy(out, s, len);
	out[len] = '\0';
	b->used += len + 1;
	return (out);
}

char *
strpool_dup(struct strpool *sp, const char *s)
{
	return (strpool_copy(sp, s, strlen(s)));
}

void
strpool_reset(struct strpool *sp)
{
	struct strblock	*b;

	for (b = sp->first; b != NULL; b = b->next)
		b->used = 0;
	sp->cur = sp->first;
}

void
strpool_clear(struct strpool *sp)
{
	struct strblock	*b, *next;

	for (b = sp->first; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	sp->first = sp->cur = NULL;
}
