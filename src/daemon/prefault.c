/*
 * prefault.c fills heap pages ahead of an event that will need them: a
 * first Synchronize of a thousand containers touches a thousand pages of
 * heap, each a page fault, where the kernel fills them at once for a
 * fraction of that when asked (memfill.h).
 *
 * The pages must be heap that malloc hands out next. glibc's main heap
 * grows at its top (brk): chunks are allocated until the break has moved
 * by the room asked, each stretch the break passes filled before the next
 * chunk is carved from it (the header malloc writes there would fault its
 * page), each chunk carved below the old break (from the top chunk, whose
 * pages may never have been touched) filled where it is, and the chunks
 * are freed but the last. They merge into one free
 * chunk, out of which the event's allocations are carved. The last one,
 * carved from the top after the break moved, stays where it is until
 * prefault_done: freed into the top at once, the room would exceed
 * glibc's trim threshold and go straight back to the system.
 *
 * This puts glibc's documented behaviour to use without relying on it:
 * under another malloc (the sanitizers') the break does not move and no
 * page is filled, and a kernel before 5.14 refuses the advice; either way
 * the chunks are freed and the event's pages fault as they would have.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <unistd.h>

#include "memfill.h"
#include "prefault.h"
#include "xmalloc.h"

/* Under glibc's least mmap threshold (128 KiB): from the heap. */
#define CHUNK		((size_t)63 << 10)

struct prefault {
	void	*guard;		/* the last chunk, held */
	size_t	 filled;
};

struct prefault *
prefault_heap(size_t bytes)
{
	struct prefault	*pf;
	void		**v;
	size_t		  n = 0, most, i;
	char		 *brk0, *top, *filled;

	if (bytes < PREFAULT_MIN)
		return (NULL);
	if (bytes > PREFAULT_MAX)
		bytes = PREFAULT_MAX;
	pf = xcalloc(1, sizeof *pf);
	/* Twice the room in chunks at most: free chunks of the heap come
	 * first, and under another malloc the break never moves. */
	most = 2 * (bytes / CHUNK + 1);
	v = xcalloc(most, sizeof *v);
	if ((brk0 = sbrk(0)) == (void *)-1) {
		free(v);
		return (pf);
	}
	/* Short of memory, the room is smaller: nothing is refused here.
	 * What the break passed is filled before the next chunk is carved
	 * from it: a chunk's header written first would fault its page. */
	filled = brk0;
	while (n < most && (size_t)(filled - brk0) < bytes &&
	    (v[n] = malloc(CHUNK)) != NULL) {
		/* From room below the old break (the top chunk's, whose
		 * pages may never have been touched): filled where it is. */
		if ((char *)v[n] < brk0)
			pf->filled += memfill(v[n], (char *)v[n] + CHUNK);
		n++;
		if ((top = sbrk(0)) != (void *)-1 && top > filled) {
			pf->filled += memfill(filled, top);
			filled = top;
		}
	}
	if (n > 0)
		pf->guard = v[--n];
	for (i = n; i > 0; i--)
		free(v[i - 1]);
	free(v);
	return (pf);
}

size_t
prefault_filled(const struct prefault *pf)
{
	return (pf != NULL ? pf->filled : 0);
}

void
prefault_done(struct prefault *pf)
{
	if (pf == NULL)
		return;
	free(pf->guard);
	free(pf);
}
