/*
 * UTF-8 as jansson takes it: the policy keeps peers' strings (protobuf
 * does not check them) and writes them into JSON documents, which refuse
 * what is not UTF-8.
 */
#ifndef TOPOAWARE_UTF8_H
#define TOPOAWARE_UTF8_H

#include <stddef.h>

/* Length of the valid sequence at p (p[0] not ASCII), or 0 when it is not
 * one: overlong forms, surrogates and values past U+10FFFF are not. */
size_t	utf8_seqlen(const unsigned char *);
/* How many of the len bytes at p, from the first, are ASCII. */
size_t	utf8_ascii_prefix(const unsigned char *p, size_t len);
/* Whether s is UTF-8 throughout, as jansson takes it. */
int	utf8_valid(const char *);
/* A copy of s with every byte that does not start a valid sequence
 * replaced by U+FFFD (caller frees). */
char	*utf8_clean(const char *);

#endif
