/*
 * A growing text buffer for JSON written straight from the policy's
 * structures: strings escaped as jansson escapes them, without building
 * a tree of values first (the state document of thousands of containers,
 * the events of a Synchronize).
 */
#ifndef TOPOAWARE_TEXTBUF_H
#define TOPOAWARE_TEXTBUF_H

#include <stddef.h>
#include <string.h>

#include "cpuset.h"
#include "policy.h"

struct textbuf {
	char	*p;
	size_t	 len;
	size_t	 size;
};

void	 tb_init(struct textbuf *, size_t size);
/* The text, NUL-terminated, and its length; the buffer is the caller's. */
char	*tb_finish(struct textbuf *, size_t *len);
/* Room for n more bytes (the slow part of tb_reserve). */
void	 tb_grow(struct textbuf *, size_t n);
/* A buffer that is a malloc'd string s, which it takes, to write after;
 * and n bytes put before what the buffer holds: a text of hundreds of KB
 * made elsewhere (a Synchronize's event) grows where it is. */
void	 tb_adopt(struct textbuf *, char *s);
void	 tb_prepend(struct textbuf *, const char *, size_t n);

/* Inline: a document of thousands of containers adds millions of bits. */
static inline void
tb_reserve(struct textbuf *b, size_t n)
{
	if (b->len + n > b->size)
		tb_grow(b, n);
}

static inline void
tb_add(struct textbuf *b, const char *s, size_t n)
{
	tb_reserve(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

#define tb_lit(b, s)	tb_add(b, s, sizeof s - 1)
void	 tb_int(struct textbuf *, long long);
/* The inside of a JSON string; bytes that are not UTF-8 become U+FFFD. */
void	 tb_esc(struct textbuf *, const char *);
/* A JSON string. */
void	 tb_str(struct textbuf *, const char *);
/*
 * What tb_esc writes of s, without writing it: the length of the longest
 * prefix of whole characters whose escaped text is at most max bytes,
 * that prefix's length in *bytes when not NULL. s is UTF-8 (cleaned).
 */
size_t	 tb_esc_len(const char *s, size_t max, size_t *bytes);
/* A cpuset in list form, as a JSON string. */
void	 tb_cpuset(struct textbuf *, const struct cpuset *);
/* An object of keys to strings (keys distinct). */
void	 tb_kv(struct textbuf *, const struct policy_kv *, int);

#endif
