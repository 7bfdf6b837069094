/*
 * textbuf.c: the text buffer of textbuf.h.
 */
#include "autoconf.h"

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

/* The inside of a JSON string, escaped as jansson escapes it. */
void
tb_esc(struct textbuf *b, const char *s)
{
	const unsigned char	*p = (const unsigned char *)s, *run;
	size_t			 n;

	for (;;) {
		for (run = p; *p >= 0x20 && *p < 0x80 && *p != '"' &&
		    *p != '\\'; p++)
			;
		if (p > run)
			tb_add(b, (const char *)run, (size_t)(p - run));
		if (*p == '\0')
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
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 len = 0, n, w;

	for (; *p != '\0'; p += n) {
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
	char	*list = cpuset_format(s);

	tb_str(b, list);
	free(list);
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

