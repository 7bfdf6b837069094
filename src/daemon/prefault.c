/*
 * prefault.c fills heap pages ahead of an event that will need them: a
 * first Synchronize of a thousand containers touches a thousand pages of
 * heap, each a page fault, where the kernel fills them at once for a
 * fraction of that when asked (memfill.h).
 *
 * Filled small pages still cost much on a virtual machine that shadows
 * the guest's page tables: the first write to each is a trip through the
 * hypervisor (some 5 us on the bench's host, where a thousand of them
 * were a fifth of that Synchronize). A transparent huge page is one such
 * trip for 2 MiB. So the room is made of whole huge pages of new heap,
 * advised for them (MADV_HUGEPAGE: the operator's setting decides, as
 * for a large message's arena, pbarena.c), filled, and advised against
 * them once the event is done, so that khugepaged never makes whole huge
 * pages of the few small ones the heap keeps there. malloc_trim, after
 * the event, gives back what the event left free, which splits those
 * pages: the memory kept is what it would have been.
 *
 * The pages must be heap that malloc hands out next. glibc's main heap
 * grows at its top (brk) by what a request lacks plus M_TOP_PAD. That pad
 * is raised until the break moves, so that it moves once by the whole
 * room (a huge page must be whole in the heap before anything is written
 * there), then set back. Chunks are allocated until the break moves:
 * those carved below it (free chunks, the old top) are held, out of the
 * event's way. One chunk held takes what lies between the top and the
 * next huge page boundary. The room starts there: advised and filled
 * before malloc writes a header in it, then carved into chunks that are
 * freed but the last. They merge into one free chunk, out of which the
 * event's allocations are carved. The last one stays, with the others
 * held, until prefault_done: freed into the top at once, the room would
 * exceed glibc's trim threshold and go straight back to the system.
 *
 * This puts glibc's documented behaviour to use without relying on it:
 * under another malloc (the sanitizers') the break does not move and no
 * page is filled, and a kernel before 5.14 refuses the advice; either way
 * the chunks are freed and the event's pages fault as they would have.
 */
#include "autoconf.h"

#include <sys/mman.h>

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "memfill.h"
#include "prefault.h"
#include "xmalloc.h"

/* Under glibc's least mmap threshold (128 KiB): from the heap. */
#define CHUNK		((size_t)63 << 10)
/* A transparent huge page where pages are 4 KiB (x86-64, most arm64). */
#define HUGE_PAGE	((size_t)2 << 20)

struct prefault {
	void	**held;		/* chunks kept out of the event's way */
	size_t	  nheld;
	char	 *huge;		/* advised for huge pages, hugelen bytes */
	size_t	  hugelen;
	size_t	  filled;
};

void
prefault_init(void)
{
	/* Any mallopt call fixes glibc's mmap and trim thresholds at what
	 * they are (128 KiB) for good; made at start, malloc behaves the
	 * same before and after the first large event. */
	(void)mallopt(M_TOP_PAD, (int)PREFAULT_TOP_PAD);
}

static uintptr_t
huge_up(uintptr_t a)
{
	return ((a + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}

/*
 * The room, from the huge page boundary past the top chunk at t: what
 * lies between is taken by one chunk, held, so that the event's
 * allocations start at the boundary; the room is advised and filled
 * before malloc writes a header there. Chunks are then carved from it
 * until they cover it, the last held (the guard), the others freed.
 */
static void
make_room(struct prefault *pf, void **v, size_t most, char *t, char *top,
    size_t bytes)
{
	uintptr_t	b, r;
	size_t		n = 0, i;
	char		*end;

	/* 64 bytes at least for the chunk that takes them. */
	b = huge_up((uintptr_t)t + 64);
	r = huge_up(b + bytes);
	if (r > ((uintptr_t)top & ~(HUGE_PAGE - 1)))
		r = (uintptr_t)top & ~(HUGE_PAGE - 1);
	if (r <= b)
		return;
	/* A kernel without transparent huge pages refuses the advice:
	 * small pages then, filled as before. */
	if (madvise((void *)b, r - b, MADV_HUGEPAGE) == 0) {
		pf->huge = (char *)b;
		pf->hugelen = r - b;
	}
	pf->filled += memfill((void *)b, (void *)r);
	/* glibc's chunk of a request: its size field (8 bytes) added,
	 * rounded to 16. Elsewhere than the top (a free chunk that fits),
	 * the room starts a little lower, at t: it still fills. */
	if ((pf->held[pf->nheld] = malloc(b - (uintptr_t)t - 8)) != NULL)
		pf->nheld++;
	while (n < most && (v[n] = malloc(CHUNK)) != NULL) {
		end = (char *)v[n++] + CHUNK;
		if ((uintptr_t)end >= b + bytes)
			break;
	}
	if (n > 0)
		pf->held[pf->nheld++] = v[--n];
	for (i = n; i > 0; i--)
		free(v[i - 1]);
}

struct prefault *
prefault_heap(size_t bytes)
{
	struct prefault	*pf;
	void		**v;
	size_t		  n = 0, most;
	char		 *brk0, *top = NULL;

	if (bytes < PREFAULT_MIN)
		return (NULL);
	if (bytes > PREFAULT_MAX)
		bytes = PREFAULT_MAX;
	pf = xcalloc(1, sizeof *pf);
	/* Twice the room in chunks at most: free chunks of the heap come
	 * first, and under another malloc the break never moves. */
	most = 2 * (bytes / CHUNK + 1);
	v = xcalloc(most, sizeof *v);
	/* The chunks before the room, the one before the boundary, the
	 * guard. */
	pf->held = xcalloc(most + 2, sizeof *pf->held);
	if ((brk0 = sbrk(0)) == (void *)-1) {
		free(v);
		return (pf);
	}
	/* The break moves once, by the room and three huge pages: to
	 * align it, and some to spare. The pad is bounded by PREFAULT_MAX,
	 * well within an int. */
	(void)mallopt(M_TOP_PAD, (int)(bytes + 3 * HUGE_PAGE));
	/* Chunks until the break moves. Those carved below it (free
	 * chunks, the old top) stay held, out of the event's way. Short of
	 * memory, there is no room: nothing is refused here. */
	while (n < most && (v[n] = malloc(CHUNK)) != NULL) {
		pf->held[pf->nheld++] = v[n++];
		if ((top = sbrk(0)) != (void *)-1 && top > brk0)
			break;
	}
	(void)mallopt(M_TOP_PAD, (int)PREFAULT_TOP_PAD);
	/* Past the last chunk, the top chunk. */
	if (n > 0 && top != (void *)-1 && top > brk0)
		make_room(pf, v + n, most - n, (char *)v[n - 1] + CHUNK, top,
		    bytes);
	else {
		/* No room made (another malloc): nothing to keep away. */
		while (pf->nheld > 0)
			free(pf->held[--pf->nheld]);
	}
	free(v);
	return (pf);
}

size_t
prefault_filled(const struct prefault *pf)
{
	return (pf != NULL ? pf->filled : 0);
}

size_t
prefault_huge(const struct prefault *pf)
{
	return (pf != NULL ? pf->hugelen : 0);
}

void
prefault_done(struct prefault *pf)
{
	size_t	i;

	if (pf == NULL)
		return;
	/* Still heap (the guard holds it): no more huge pages made there,
	 * by a fault or by khugepaged. */
	if (pf->huge != NULL)
		(void)madvise(pf->huge, pf->hugelen, MADV_NOHUGEPAGE);
	for (i = 0; i < pf->nheld; i++)
		free(pf->held[i]);
	free(pf->held);
	free(pf);
}
