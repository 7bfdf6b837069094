/*
 * Room made in the heap before an event that allocates much (a
 * Synchronize of thousands of containers), its pages filled by the
 * kernel at once instead of one page fault at a time (prefault.c).
 */
#ifndef TOPOAWARE_PREFAULT_H
#define TOPOAWARE_PREFAULT_H

#include <stddef.h>

/* Less than this is not worth a call. */
#define PREFAULT_MIN	((size_t)1 << 20)
/* Nor more than this made at once. */
#define PREFAULT_MAX	((size_t)64 << 20)

struct prefault;


/*
 * About bytes of free heap, filled, for the allocations that follow (at
 * most PREFAULT_MAX; none below PREFAULT_MIN). It holds the room until
 * prefault_done, after the event: what the event did not use is then
 * the heap's to give back. Never fails: with another malloc, or an old
 * kernel, the event's pages fault as they would have.
 */
struct prefault	*prefault_heap(size_t bytes);
/* Bytes the kernel filled: 0 when it could not. */
size_t		 prefault_filled(const struct prefault *);
/* Bytes of it made transparent huge pages: 0 when none. */
size_t		 prefault_huge(const struct prefault *);
void		 prefault_done(struct prefault *);

#endif
