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
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>

#include "pbarena.h"
#include "xmalloc.h"

#define ALIGN		8
#define MIN_BLOCK	1024
/* A larger single request gets a block of its own size. */
#define MAX_BLOCK	PBARENA_BLOCK_MAX

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

struct pbarena *
pbarena_new(size_t hint)
{
	struct pbarena	*a;

	a = xcalloc(1, sizeof *a);
	a->pa.alloc = arena_alloc;
	a->pa.free = arena_free;
	a->pa.allocator_data = a;
	(void)block_new(a, hint < MAX_BLOCK ? hint : MAX_BLOCK);
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
		free(b);
	}
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
pbarena_blocks(const struct pbarena *a)
{
	const struct block	*b;
	int			 n = 0;

	for (b = a->head; b != NULL; b = b->next)
		n++;
	return (n);
}
