/*
 * prefault.c fills heap pages ahead of an event that will need them. A
 * page of memory touched for the first time costs a page fault: a few
 * tenths of a microsecond on hardware, some ten on virtual machines whose
 * faults go through the hypervisor (the bench's host_page_touch_us), and a
 * first Synchronize of a thousand containers touches a thousand pages of
 * heap. Asked with madvise(MADV_POPULATE_WRITE), the kernel fills a range
 * at once, for a fraction of that a page (0.6 us on the same machine).
 *
 * The pages must be heap that malloc hands out next. glibc's main heap
 * grows at its top (brk): chunks are allocated until the break has moved
 * by the room asked, the pages between the old break and the new one are
 * filled, and the chunks are freed but the last. They merge into one free
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

#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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
	uintptr_t	  page, start, end;
	size_t		  n = 0, most, i;
	long		  pagesize;
	char		 *brk0;

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
	/* Short of memory, the room is smaller: nothing is refused here. */
	while (n < most && (size_t)((char *)sbrk(0) - brk0) < bytes &&
	    (v[n] = malloc(CHUNK)) != NULL)
		n++;
	/* No page size known (never seen), nothing filled. Refused by an
	 * old kernel, the pages fault one by one, as without. */
	if ((pagesize = sysconf(_SC_PAGESIZE)) > 0) {
		page = (uintptr_t)pagesize;
		start = ((uintptr_t)brk0 + page - 1) & ~(page - 1);
		end = (uintptr_t)sbrk(0);
		if (end > start && madvise((void *)start, end - start,
		    MADV_POPULATE_WRITE) == 0)
			pf->filled = end - start;
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
