/*
 * Memory for decoded protobuf messages: protobuf-c allocates a message,
 * each nested message, array and string with a malloc of its own, some
 * thirty for one container of a Synchronize, each with the allocator's
 * header and rounding. An arena hands them out of a few large blocks
 * instead, and gives them all back at once: a message unpacked into it
 * is freed with the arena, never with protobuf_c_message_free_unpacked.
 */
#ifndef TOPOAWARE_PBARENA_H
#define TOPOAWARE_PBARENA_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

struct pbarena;

/* The most a block holds, unless one allocation needs more. */
#define PBARENA_BLOCK_MAX	(64u << 10)

/* An arena whose first block holds about hint bytes (a decoder's guess
 * from the wire size), at most PBARENA_BLOCK_MAX. */
struct pbarena	*pbarena_new(size_t hint);
/* The same, but from a hint of PBARENA_MAPPED_MIN up its first block
 * holds at least hint bytes, mapped on its own in huge pages (pbarena.c
 * says why): for a message that may be megabytes and is not one pod's. */
#define PBARENA_MAPPED_MIN	((size_t)1 << 20)
struct pbarena	*pbarena_new_large(size_t hint);
void		 pbarena_free(struct pbarena *);
/* The allocator to give protobuf-c: its free does nothing. */
ProtobufCAllocator *pbarena_allocator(struct pbarena *);
/* Bytes handed out, bytes of the blocks, how many blocks, and whether
 * the first is mapped on its own: for tests. */
size_t		 pbarena_used(const struct pbarena *);
size_t		 pbarena_size(const struct pbarena *);
int		 pbarena_blocks(const struct pbarena *);
int		 pbarena_mapped(const struct pbarena *);

#endif
