/*
 * FNV-1a over bytes: the in-memory digest of a file's text (exports.c)
 * and the hash of a table of texts (topoaware-mksysfs). Not for anything
 * a peer chooses the bytes of and a table's cost depends on.
 */
#ifndef TOPOAWARE_FNV_H
#define TOPOAWARE_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_OFFSET	14695981039346656037ULL

/* h, the digest of the bytes before, with len more at p. */
static inline uint64_t
fnv1a_more(uint64_t h, const void *p, size_t len)
{
	const unsigned char	*s = p;
	size_t			 i;

	for (i = 0; i < len; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return (h);
}

#endif
