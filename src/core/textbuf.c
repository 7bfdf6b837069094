/*
 * textbuf.c: the text buffer of textbuf.h.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textbuf.h"
#include "utf8.h"
#include "xmalloc.h"

void
tb_grow(struct textbuf *b, size_t n)
{
	size_t	size = b->size;

	while (b->len + n > size)
		size *= 2;
	b->p = xreallocarray(b->p, size, 1);
	b->size = size;
}

void
tb_adopt(struct textbuf *b, char *s)
{
	b->p = s;
	b->len = strlen(s);
	b->size = b->len + 1;
}

void
tb_prepend(struct textbuf *b, const char *s, size_t n)
{
	tb_reserve(b, n);
	memmove(b->p + n, b->p, b->len);
	memcpy(b->p, s, n);
	b->len += n;
}

void
tb_int(struct textbuf *b, long long v)
{
	char			 digits[24], *d = digits + sizeof digits;
	unsigned long long	 u;

	/* By hand: snprintf costs more than the rest of a container. */
	u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	do {
		*--d = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0);
	if (v < 0)
		*--d = '-';
	tb_add(b, d, (size_t)(digits + sizeof digits - d));
}

/*
 * Whether none of the eight bytes of w needs escaping in JSON: none has
 * its high bit, is below 0x20, a '"' or a '\\'. Each test is the word
 * trick for "some byte is below n", which is exact about whether there is
 * one (a borrow only ever follows a byte that is).
 */
static int
plain_word(uint64_t w)
{
	const uint64_t	ones = 0x0101010101010101ULL, high = ones << 7;
	uint64_t	q = w ^ (ones * '"'), bs = w ^ (ones * '\\');

	return (((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
	    ((bs - ones) & ~bs)) & high) == 0);
}

static int
plain_byte(unsigned char c)
{
	return (c >= 0x20 && c < 0x80 && c != '"' && c != '\\');
}

/* The bytes from p on, up to end, that go out as they are. */
static const unsigned char *
plain_run(const unsigned char *p, const unsigned char *end)
{
	uint64_t	w;

	for (; end - p >= 8; p += 8) {
		memcpy(&w, p, sizeof w);
		if (!plain_word(w))
			break;
	}
	while (p < end && plain_byte(*p))
		p++;
	return (p);
}

/* The inside of a JSON string, escaped as jansson escapes it. */
void
tb_esc(struct textbuf *b, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s, *run, *end;
	size_t			 n;

	end = p + strlen(s);
	for (;;) {
		run = p;
		p = plain_run(p, end);
		if (p > run)
			tb_add(b, (const char *)run, (size_t)(p - run));
		if (p == end)
			break;
		if (*p >= 0x80) {
			if ((n = utf8_seqlen(p)) == 0) {
				tb_lit(b, "\xef\xbf\xbd");
				n = 1;
			} else
				tb_add(b, (const char *)p, n);
			p += n;
			continue;
		}
		switch (*p) {
		case '"':
			tb_lit(b, "\\\"");
			break;
		case '\\':
			tb_lit(b, "\\\\");
			break;
		case '\b':
			tb_lit(b, "\\b");
			break;
		case '\f':
			tb_lit(b, "\\f");
			break;
		case '\n':
			tb_lit(b, "\\n");
			break;
		case '\r':
			tb_lit(b, "\\r");
			break;
		case '\t':
			tb_lit(b, "\\t");
			break;
		default:
			tb_reserve(b, 7);
			b->len += (size_t)snprintf(b->p + b->len, 7,
			    "\\u%04X", *p);
			break;
		}
		p++;
	}
}

size_t
tb_esc_len(const char *s, size_t max, size_t *bytes)
{
	const unsigned char	*p = (const unsigned char *)s, *end, *run;
	size_t			 len = 0, n, w;

	/* Each byte is at least one of the width: none past max counts. */
	end = p + strnlen(s, max);
	for (; p < end; p += n) {
		/* What goes out as it is: as wide as it is long. */
		run = p;
		p = plain_run(p, (size_t)(end - p) > max - len ?
		    p + (max - len) : end);
		len += (size_t)(p - run);
		if (p == end || len == max)
			break;
		n = 1;
		if (*p >= 0x80) {
			if ((n = utf8_seqlen(p)) == 0)
				n = 1;
			w = n == 1 ? 3 : n;	/* U+FFFD */
		} else if (*p == '"' || *p == '\\' || *p == '\b' ||
		    *p == '\f' || *p == '\n' || *p == '\r' || *p == '\t')
			w = 2;
		else
			w = *p < 0x20 ? 6 : 1;
		if (len + w > max)
			break;
		len += w;
	}
	if (bytes != NULL)
		*bytes = (size_t)(p - (const unsigned char *)s);
	return (len);
}

void
tb_str(struct textbuf *b, const char *s)
{
	tb_lit(b, "\"");
	tb_esc(b, s);
	tb_lit(b, "\"");
}

/* A cpuset in list form, as a JSON string. */
void
tb_cpuset(struct textbuf *b, const struct cpuset *s)
{
	size_t	 room, n;

	/* Digits, commas and dashes, nothing to escape: written where the
	 * text goes on, between its quotes, a second time only when the
	 * buffer had no room for them (it doubles). */
	tb_reserve(b, 64);
	room = b->size - b->len - 2;
	if ((n = cpuset_format_to(s, b->p + b->len + 1, room)) >= room) {
		tb_reserve(b, n + 3);
		(void)cpuset_format_to(s, b->p + b->len + 1, n + 1);
	}
	b->p[b->len] = '"';
	b->len += n + 1;
	b->p[b->len++] = '"';
}

/* Annotations, env or labels: their keys are distinct (kv_copy,
 * parse_kv). */
void
tb_kv(struct textbuf *b, const struct policy_kv *kv, int n)
{
	int	i;

	tb_lit(b, "{");
	for (i = 0; i < n; i++) {
		if (i > 0)
			tb_lit(b, ",");
		tb_str(b, kv[i].key);
		tb_lit(b, ":");
		tb_str(b, kv[i].value);
	}
	tb_lit(b, "}");
}


void
tb_init(struct textbuf *b, size_t size)
{
	b->size = size > 64 ? size : 64;
	b->p = xmalloc(b->size);
	b->len = 0;
}

char *
tb_finish(struct textbuf *b, size_t *len)
{
	tb_reserve(b, 1);
	b->p[b->len] = '\0';
	if (len != NULL)
		*len = b->len;
	return (b->p);
}

