/*
 * pbarena.c: a bump allocator in blocks. Each allocation is aligned to 8
 * bytes, which every protobuf-c field type needs at most (pointers,
 * 64-bit integers, doubles). A request that does not fit the last block
 * starts a new one, twice the size of the last (up to PBARENA_BLOCK_MAX)
 * or the request's, so a guess too small costs a few blocks, not one per
 * allocation.
 *
 * Blocks stay under glibc's mmap threshold (128 KiB): from the heap they
 * reuse memory that is free there (a start-up's, a last request's), where
 * a block of megabytes would be mapped afresh, every page a new fault.
 *
 * Except, when asked (pbarena_new_large), the first block of a message
 * guessed to unpack to a MiB or more (a Synchronize of a thousand
 * containers): the heap has no such room free, so its pages are new
 * whatever we do. That block is mapped on its own, whole 2 MiB pages
 * aligned as such, and advised for transparent huge pages: a few faults
 * where 4 KiB pages take hundreds, each dear on a virtual machine. Where
 * the kernel gives none, it is a mapping like the one malloc would make
 * for that size. When the message takes the MiB it was guessed to, a huge
 * page zeroes at most twice what the small ones would have.
 */
#include "autoconf.h"

#include <sys/mman.h>

#include <stdint.h>
#include <stdlib.h>

#include "pbarena.h"
#include "xmalloc.h"

#define ALIGN		8
#define MIN_BLOCK	1024
/* A larger single request gets a block of its own size. */
#define MAX_BLOCK	PBARENA_BLOCK_MAX
/* A transparent huge page where pages are 4 KiB (x86-64, most arm64). */
#define HUGE_PAGE	((size_t)2 << 20)

struct block {
	struct block	*next;
	size_t		 size;		/* bytes of data */
	size_t		 used;
	/* data follows, aligned */
	uint64_t	 data[];
};

struct pbarena {
	ProtobufCAllocator	 pa;
	struct block		*head;		/* the block in use */
	size_t			 used;
	size_t			 size;
	struct block		*mapped;	/* the first, when mapped */
	void			*map;		/* its mapping */
	size_t			 maplen;
};

static struct block *
block_new(struct pbarena *a, size_t size)
{
	struct block	*b;

	if (size < MIN_BLOCK)
		size = MIN_BLOCK;
	size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	b = xmalloc(sizeof *b + size);
	b->next = a->head;
	b->size = size;
	b->used = 0;
	a->head = b;
	a->size += size;
	return (b);
}

/* The first block, of at least size bytes, mapped in whole huge pages;
 * NULL when the system has no such room. */
static struct block *
block_mapped(struct pbarena *a, size_t size)
{
	struct block	*b;
	size_t		 len;
	char		*m, *at;

	if (size > SIZE_MAX / 2 - sizeof *b - 2 * HUGE_PAGE)
		return (NULL);
	len = (sizeof *b + size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	/* A huge page more, to start at a boundary; pages not touched
	 * cost nothing. */
	m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return (NULL);
	at = m + (HUGE_PAGE - (uintptr_t)m % HUGE_PAGE) % HUGE_PAGE;
	/* Advice: a kernel without transparent huge pages refuses it, and
	 * the block is made of small pages then, as malloc's would be. */
	(void)madvise(at, len, MADV_HUGEPAGE);
	a->map = m;
	a->maplen = len + HUGE_PAGE;
	b = (struct block *)(void *)at;
	b->next = a->head;
	b->size = len - sizeof *b;
	b->used = 0;
	a->head = a->mapped = b;
	a->size += b->size;
	return (b);
}

static void *
arena_alloc(void *data, size_t n)
{
	struct pbarena	*a = data;
	struct block	*b = a->head;
	size_t		 want, room;
	void		*p;

	if (n > SIZE_MAX - ALIGN)
		return (NULL);
	want = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	if (b == NULL || b->size - b->used < want) {
		room = b != NULL ? 2 * b->size : 0;
		if (room > MAX_BLOCK)
			room = MAX_BLOCK;
		b = block_new(a, want > room ? want : room);
	}
	p = (char *)b->data + b->used;
	b->used += want;
	a->used += want;
	return (p);
}

static void
arena_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

/* An arena with no block yet. */
static struct pbarena *
arena_new(void)
{
	struct pbarena	*a;

	a = xcalloc(1, sizeof *a);
	a->pa.alloc = arena_alloc;
	a->pa.free = arena_free;
	a->pa.allocator_data = a;
	return (a);
}

struct pbarena *
pbarena_new(size_t hint)
{
	struct pbarena	*a = arena_new();

	(void)block_new(a, hint < MAX_BLOCK ? hint : MAX_BLOCK);
	return (a);
}

struct pbarena *
pbarena_new_large(size_t hint)
{
	struct pbarena	*a;

	if (hint < PBARENA_MAPPED_MIN)
		return (pbarena_new(hint));
	a = arena_new();
	if (block_mapped(a, hint) == NULL)
		(void)block_new(a, MAX_BLOCK);
	return (a);
}

void
pbarena_free(struct pbarena *a)
{
	struct block	*b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		if (b != a->mapped)
			free(b);
	}
	/* A mapping of ours, whole: munmap cannot fail on it. */
	if (a->map != NULL)
		(void)munmap(a->map, a->maplen);
	free(a);
}

ProtobufCAllocator *
pbarena_allocator(struct pbarena *a)
{
	return (&a->pa);
}

size_t
pbarena_used(const struct pbarena *a)
{
	return (a->used);
}

size_t
pbarena_size(const struct pbarena *a)
{
	return (a->size);
}

int
pbarena_mapped(const struct pbarena *a)
{
	return (a->mapped != NULL);
}

int
pbarena_blocks(const struct pbarena *a)
{
	const struct block	*b;
	int			 n = 0;

	for (b = a->head; b != NULL; b = b->next)
		n++;
	return (n);
}
