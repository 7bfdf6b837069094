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
 * trip for 2 MiB. So where the kernel would give advised memory huge
 * pages (the operator's setting, asked of a mapping made for the
 * question, as a large message's arena would get them, pbarena.c), the
 * room's whole huge pages are made huge pages at once (MADV_COLLAPSE,
 * Linux 6.1), and advised against them once the event is done, so that
 * khugepaged never makes whole huge pages of the few small ones the heap
 * keeps there. malloc_trim, after the event, gives back what the event
 * left free, which splits those pages.
 *
 * The pages must be heap that malloc hands out next. glibc's main heap
 * grows at its top (brk): chunks are allocated until the break has moved
 * by the room asked (a huge page more, to reach a boundary), and freed
 * but the last. They merge into one free chunk, out of which the event's
 * allocations are carved. The last one stays where it is until
 * prefault_done: freed into the top at once, the room would exceed
 * glibc's trim threshold and go straight back to the system. In small
 * pages, each stretch the break passes is filled before the next chunk
 * is carved from it (the header malloc writes there would fault its
 * page), and each chunk carved below the old break (from the top chunk,
 * whose pages may never have been touched) is filled where it is. In
 * huge pages, the headers are the only pages there are to copy when the
 * huge pages are made, and the chunks below the first huge page stay
 * held until prefault_done, so that the event starts in huge pages.
 *
 * This puts glibc's documented behaviour to use without relying on it:
 * under another malloc (the sanitizers') the break does not move and no
 * page is filled, and a kernel before 5.14 refuses the advice; either way
 * the chunks are freed and the event's pages fault as they would have.
 * No malloc setting is changed (any mallopt call would fix glibc's mmap
 * threshold, whose rise keeps a large machine's big buffers in the heap).
 */
#include "autoconf.h"

#include <sys/mman.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memfill.h"
#include "prefault.h"
#include "xmalloc.h"

/* Under glibc's least mmap threshold (128 KiB): from the heap. */
#define CHUNK		((size_t)127 << 10)
/* A transparent huge page where pages are 4 KiB (x86-64, most arm64). */
#define HUGE_PAGE	((size_t)2 << 20)
/* Linux 6.1's; older C libraries do not name it. */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

struct prefault {
	void	**held;		/* chunks kept out of the event's way */
	size_t	  nheld;
	char	 *advised;	/* advised for huge pages, advlen bytes */
	size_t	  advlen;
	size_t	  hugelen;	/* of it made huge pages */
	size_t	  filled;
};

static uintptr_t
huge_up(uintptr_t a)
{
	return ((a + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
}

/*
 * Whether the kernel would give the mapping that holds p huge pages, as
 * /proc/self/smaps says (THPeligible: the system's setting, the mapping's
 * advice, the process's prctl). 0 when it cannot be told.
 */
static int
huge_eligible(const void *p)
{
	FILE		*f;
	char		 line[512], *dash, *space;
	unsigned long	 lo, hi;
	int		 in = 0, ok = 0, start = 1;

	if ((f = fopen("/proc/self/smaps", "re")) == NULL)
		return (0);
	while (fgets(line, sizeof line, f) != NULL) {
		/* A mapping's first line: "lo-hi perms ...". The rest of a
		 * line longer than the buffer (a long path) is no start. */
		dash = strchr(line, '-');
		space = strchr(line, ' ');
		if (start && dash != NULL && space != NULL && dash < space &&
		    sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (start && in &&
		    strncmp(line, "THPeligible:", 12) == 0) {
			ok = atoi(line + 12) == 1;
			break;
		}
		start = strchr(line, '\n') != NULL;
	}
	(void)fclose(f);
	return (ok);
}

/*
 * Whether a fault in advised anonymous memory would be given a huge page
 * now: asked of a mapping made for the question, never touched.
 */
static int
huge_available(void)
{
	char	*m;
	int	 ok;

	m = mmap(NULL, 2 * HUGE_PAGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return (0);
	ok = madvise((void *)huge_up((uintptr_t)m), HUGE_PAGE,
	    MADV_HUGEPAGE) == 0 && huge_eligible((void *)huge_up((uintptr_t)m));
	(void)munmap(m, 2 * HUGE_PAGE);
	return (ok);
}

/*
 * The whole huge pages of [from, to) made huge pages at once: advised for
 * them, then collapsed (MADV_COLLAPSE, Linux 6.1; refused before). Only
 * the pages malloc wrote are there to copy. Kept in pf.
 */
static void
make_huge(struct prefault *pf, char *from, char *to)
{
	uintptr_t	b, r;

	b = huge_up((uintptr_t)from);
	r = (uintptr_t)to & ~(HUGE_PAGE - 1);
	if (r <= b || madvise((void *)b, r - b, MADV_HUGEPAGE) != 0)
		return;
	pf->advised = (char *)b;
	pf->advlen = r - b;
	if (madvise((void *)b, r - b, MADV_COLLAPSE) == 0)
		pf->hugelen = r - b;
}

struct prefault *
prefault_heap(size_t bytes)
{
	struct prefault	*pf;
	void		**v;
	size_t		  n = 0, most, i;
	char		 *brk0, *top, *filled, *end;
	uintptr_t	  want;
	int		  huge;

	if (bytes < PREFAULT_MIN)
		return (NULL);
	if (bytes > PREFAULT_MAX)
		bytes = PREFAULT_MAX;
	pf = xcalloc(1, sizeof *pf);
	/* Twice the room in chunks at most: free chunks of the heap come
	 * first, and under another malloc the break never moves. */
	most = 2 * ((bytes + 2 * HUGE_PAGE) / CHUNK + 1);
	v = xcalloc(most, sizeof *v);
	pf->held = xcalloc(most, sizeof *pf->held);
	if ((brk0 = sbrk(0)) == (void *)-1) {
		free(v);
		return (pf);
	}
	/* Collapsing ignores the system's setting: asked only where a
	 * fault would have been given a huge page. Then the room is whole
	 * huge pages from the first boundary past the break. */
	huge = huge_available();
	/* Short of memory, the room is smaller: nothing is refused here.
	 * Small pages: what the break passed is filled before the next
	 * chunk is carved from it, as a chunk's header written first would
	 * fault its page. Huge ones: those headers are all the huge pages
	 * have to copy as they are made. */
	filled = brk0;
	want = huge ? huge_up((uintptr_t)brk0) + huge_up(bytes) :
	    (uintptr_t)brk0 + bytes;
	while (n < most && (uintptr_t)filled < want &&
	    (v[n] = malloc(CHUNK)) != NULL) {
		/* From room below the old break (the top chunk's, whose
		 * pages may never have been touched): filled where it is,
		 * unless the event is kept off it (below). */
		if (!huge && (char *)v[n] < brk0)
			pf->filled += memfill(v[n], (char *)v[n] + CHUNK);
		n++;
		if ((top = sbrk(0)) != (void *)-1 && top > filled) {
			if (!huge)
				pf->filled += memfill(filled, top);
			filled = top;
		}
	}
	if (huge && filled > brk0)
		make_huge(pf, brk0, filled);
	if (huge && pf->hugelen == 0) {
		/* None made after all: small pages, filled as above. */
		for (i = 0; i < n; i++)
			if ((char *)v[i] < brk0)
				pf->filled += memfill(v[i],
				    (char *)v[i] + CHUNK < brk0 ?
				    (char *)v[i] + CHUNK : brk0);
		pf->filled += memfill(brk0, filled);
	} else if (huge) {
		/* Past the last huge page. */
		end = pf->advised + pf->hugelen;
		if (filled > end)
			pf->filled += memfill(end, filled);
		pf->filled += pf->hugelen;
	}
	/* With huge pages, the chunks that start below them stay held, so
	 * that the event's allocations start in them; the last one is held
	 * too (the guard, prefault_done). The others are freed into one
	 * free chunk. */
	for (i = 0; i < n; i++) {
		if (i == n - 1 || (pf->hugelen > 0 &&
		    (char *)v[i] < pf->advised))
			pf->held[pf->nheld++] = v[i];
		else
			free(v[i]);
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
	if (pf->advised != NULL)
		(void)madvise(pf->advised, pf->advlen, MADV_NOHUGEPAGE);
	for (i = 0; i < pf->nheld; i++)
		free(pf->held[i]);
	free(pf->held);
	free(pf);
}
