/*
 * utf8.c checks and cleans UTF-8, so that strings from peers can always
 * be written into the JSON state document and read back as they were.
 */
#include <stdint.h>
#include <string.h>

#include "utf8.h"
#include "xmalloc.h"

size_t
utf8_seqlen(const unsigned char *p)
{
	unsigned int	cp;
	size_t		n, i;

	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else
		return (0);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return (0);
	return (n);
}

size_t
utf8_ascii_prefix(const unsigned char *p, size_t len)
{
	uint64_t	w;
	size_t		i;

	/* Eight at a time: the ids, names and labels of a Synchronize are
	 * nearly all ASCII. */
	for (i = 0; len - i >= 8; i += 8) {
		memcpy(&w, p + i, sizeof w);
		if (w & 0x8080808080808080ULL)
			break;
	}
	while (i < len && p[i] < 0x80)
		i++;
	return (i);
}

/* Whether the len bytes at p (a NUL after them) are UTF-8 throughout. */
static int
valid(const unsigned char *p, size_t len)
{
	size_t	i = 0, n;

	while ((i += utf8_ascii_prefix(p + i, len - i)) < len) {
		if ((n = utf8_seqlen(p + i)) == 0)
			return (0);
		i += n;
	}
	return (1);
}

int
utf8_valid(const char *s)
{
	return (valid((const unsigned char *)s, strlen(s)));
}

char *
utf8_clean(const char *s)
{
	const unsigned char	*p;
	char			*out, *q;
	size_t			 n, len = strlen(s);

	if (valid((const unsigned char *)s, len)) {
		out = xmalloc(len + 1);
		memcpy(out, s, len + 1);
		return (out);
	}
	q = out = xmalloc(3 * len + 1);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = *p < 0x80 ? 1 : utf8_seqlen(p)) == 0) {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			n = 1;
			continue;
		}
		memcpy(q, p, n);
		q += n;
	}
	*q = '\0';
	return (out);
}
