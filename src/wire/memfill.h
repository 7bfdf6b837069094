/*
 * Pages filled by the kernel ahead of the writes that would fault them
 * one at a time (memfill.c).
 */
#ifndef TOPOAWARE_MEMFILL_H
#define TOPOAWARE_MEMFILL_H

#include <stddef.h>

/*
 * The pages that hold any byte of [from, to), filled for writing: the
 * bytes of those pages the kernel filled, or 0 when it refused (a kernel
 * before 5.14) or from is not below to. Those pages must be mapped
 * (heap, a malloc'd block, a mapping). What they hold is kept.
 */
size_t	memfill(const void *from, const void *to);

#endif
