/*
 * utf8.c checks and cleans UTF-8, so that strings from peers can always
 * be written into the JSON state document and read back as they were.
 */
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

int
utf8_valid(const char *s)
{
	const unsigned char	*p;
	size_t			 n;

	for (p = (const unsigned char *)s; *p != '\0'; p += n)
		if ((n = *p < 0x80 ? 1 : utf8_seqlen(p)) == 0)
			return (0);
	return (1);
}

char *
utf8_clean(const char *s)
{
	const unsigned char	*p;
	char			*out, *q;
	size_t			 n;

	if (utf8_valid(s))
		return (xstrdup(s));
	q = out = xmalloc(3 * strlen(s) + 1);
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
