/*
 * jsonpick.c checks a JSON text in one pass and keeps the one string the
 * caller asked for (jsonpick.h): no tree, no allocation but the keys of
 * the objects on the path and the string picked. Containers are read by
 * recursion, as deep as jansson reads them.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpick.h"
#include "xmalloc.h"

struct jp {
	const unsigned char	*start;
	const unsigned char	*p;
	const unsigned char	*end;
	const char *const	*path;
	int			 depth;
	char			*found;
	char			*cause;
};

static int	jp_value(struct jp *, int);

static int
jp_fail(struct jp *j, const char *what)
{
	if (j->cause == NULL)
		xasprintf(&j->cause, "%s at byte %zu", what,
		    (size_t)(j->p - j->start));
	return (-1);
}

static int
jp_more(const struct jp *j, size_t n)
{
	return ((size_t)(j->end - j->p) >= n);
}

static void
jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' ||
	    *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static int
jp_digit(const struct jp *j)
{
	return (j->p < j->end && *j->p >= '0' && *j->p <= '9');
}

/* Four hex digits at p: their value, or -1. */
static long
jp_hex4(const unsigned char *p)
{
	long	v = 0;
	int	i, c;

	for (i = 0; i < 4; i++) {
		c = p[i];
		if (c >= '0' && c <= '9')
			c -= '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			c = (c | 0x20) - 'a' + 10;
		else
			return (-1);
		v = v << 4 | c;
	}
	return (v);
}

/* The length of the UTF-8 sequence at p (its first byte 0x80 or more),
 * or 0: no overlong form, no surrogate, nothing past U+10FFFF. */
static size_t
jp_utf8(const unsigned char *p, const unsigned char *end)
{
	unsigned	c = p[0], lo = 0x80, hi = 0xbf;
	size_t		n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return (0);
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return (0);
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return (0);
	return (n);
}

/* A string, j->p at its opening quote: checked, and j->p past its
 * closing one. */
static int
jp_string(struct jp *j)
{
	long	cp, lo;
	size_t	n;

	j->p++;
	for (;;) {
		if (j->p >= j->end)
			return (jp_fail(j, "unterminated string"));
		if (*j->p == '"')
			break;
		if (*j->p < 0x20)
			return (jp_fail(j, "control character in a string"));
		if (*j->p >= 0x80) {
			if ((n = jp_utf8(j->p, j->end)) == 0)
				return (jp_fail(j, "invalid UTF-8"));
			j->p += n;
			continue;
		}
		if (*j->p != '\\') {
			j->p++;
			continue;
		}
		if (!jp_more(j, 2))
			return (jp_fail(j, "unterminated string"));
		if (strchr("\"\\/bfnrt", j->p[1]) != NULL && j->p[1] != '\0') {
			j->p += 2;
			continue;
		}
		if (j->p[1] != 'u')
			return (jp_fail(j, "invalid escape"));
		if (!jp_more(j, 6) || (cp = jp_hex4(j->p + 2)) < 0)
			return (jp_fail(j, "invalid \\u escape"));
		if (cp == 0)
			return (jp_fail(j, "\\u0000 in a string"));
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return (jp_fail(j, "a low surrogate alone"));
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (!jp_more(j, 12) || j->p[6] != '\\' ||
			    j->p[7] != 'u' || (lo = jp_hex4(j->p + 8)) < 0xdc00 ||
			    lo > 0xdfff)
				return (jp_fail(j, "a high surrogate alone"));
			j->p += 12;
			continue;
		}
		j->p += 6;
	}
	j->p++;
	return (0);
}

static size_t
jp_put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return (1);
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return (2);
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return (3);
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return (4);
}

/* The text of a string jp_string checked, s to e between its quotes,
 * unescaped: never longer than its escaped form. */
static char *
jp_unescape(const unsigned char *s, const unsigned char *e)
{
	char		*out = xmalloc((size_t)(e - s) + 1), *o = out;
	unsigned long	 cp;

	while (s < e) {
		if (*s != '\\') {
			*o++ = (char)*s++;
			continue;
		}
		switch (s[1]) {
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u':
			cp = (unsigned long)jp_hex4(s + 2);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    ((unsigned long)jp_hex4(s + 8) - 0xdc00);
				s += 6;
			}
			o += jp_put_utf8(o, cp);
			s += 6;
			continue;
		default:	/* " \ / */
			*o++ = (char)s[1];
			break;
		}
		s += 2;
	}
	*o = '\0';
	return (out);
}

/* Whether the key s to e (between its quotes, checked) is want. */
static int
jp_key_is(const unsigned char *s, const unsigned char *e, const char *want)
{
	char	*key;
	int	 same;

	if (memchr(s, '\\', (size_t)(e - s)) == NULL)
		return ((size_t)(e - s) == strlen(want) &&
		    memcmp(s, want, (size_t)(e - s)) == 0);
	key = jp_unescape(s, e);
	same = strcmp(key, want) == 0;
	free(key);
	return (same);
}

static int
jp_number(struct jp *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (!jp_digit(j))
		return (jp_fail(j, "invalid number"));
	if (*j->p == '0')
		j->p++;
	else
		while (jp_digit(j))
			j->p++;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!jp_digit(j))
			return (jp_fail(j, "invalid number"));
		while (jp_digit(j))
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jp_digit(j))
			return (jp_fail(j, "invalid number"));
		while (jp_digit(j))
			j->p++;
	}
	return (0);
}

static int
jp_literal(struct jp *j, const char *word)
{
	size_t	n = strlen(word);

	if (!jp_more(j, n) || memcmp(j->p, word, n) != 0)
		return (jp_fail(j, "invalid literal"));
	j->p += n;
	return (0);
}

/* Past a container's opening byte: 1 when close ends it at once. */
static int
jp_empty(struct jp *j, int close)
{
	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return (1);
	}
	return (0);
}

/* After a member or an element: 1 when another follows (the comma read),
 * 0 when close ended the container, -1 otherwise. */
static int
jp_next(struct jp *j, int close, const char *what)
{
	jp_ws(j);
	if (j->p < j->end && *j->p == ',') {
		j->p++;
		jp_ws(j);
		return (1);
	}
	if (j->p < j->end && *j->p == close) {
		j->p++;
		return (0);
	}
	return (jp_fail(j, what));
}

/*
 * An object; on is how many keys of the path led here, or -1 off the
 * path. Only on the path are keys compared: with the path's next key, of
 * which there must be one at most.
 */
static int
jp_object(struct jp *j, int on)
{
	const unsigned char	*key;
	const char		*want;
	int			 child, seen = 0, rc;

	want = on >= 0 ? j->path[on] : NULL;
	if (jp_empty(j, '}'))
		return (0);
	for (;;) {
		if (j->p >= j->end || *j->p != '"')
			return (jp_fail(j, "a key expected"));
		key = j->p;
		if (jp_string(j) != 0)
			return (-1);
		child = -1;
		if (want != NULL && jp_key_is(key + 1, j->p - 1, want)) {
			if (seen++) {
				j->p = key;
				return (jp_fail(j, "a key on the path given "
				    "twice"));
			}
			child = on + 1;
		}
		jp_ws(j);
		if (j->p >= j->end || *j->p != ':')
			return (jp_fail(j, "':' expected"));
		j->p++;
		jp_ws(j);
		if (jp_value(j, child) != 0)
			return (-1);
		if ((rc = jp_next(j, '}', "',' or '}' expected")) <= 0)
			return (rc);
	}
}

static int
jp_array(struct jp *j)
{
	int	rc;

	if (jp_empty(j, ']'))
		return (0);
	for (;;) {
		if (jp_value(j, -1) != 0)
			return (-1);
		if ((rc = jp_next(j, ']', "',' or ']' expected")) <= 0)
			return (rc);
	}
}

static int
jp_value(struct jp *j, int on)
{
	const unsigned char	*s;
	int			 rc;

	if (j->p >= j->end)
		return (jp_fail(j, "a value expected"));
	switch (*j->p) {
	case '{':
	case '[':
		if (++j->depth > JSONPICK_MAX_DEPTH)
			return (jp_fail(j, "nested too deep"));
		rc = *j->p == '{' ? jp_object(j, on) : jp_array(j);
		j->depth--;
		return (rc);
	case '"':
		s = j->p;
		if (jp_string(j) != 0)
			return (-1);
		if (on >= 0 && j->path[on] == NULL)
			j->found = jp_unescape(s + 1, j->p - 1);
		return (0);
	case 't':
		return (jp_literal(j, "true"));
	case 'f':
		return (jp_literal(j, "false"));
	case 'n':
		return (jp_literal(j, "null"));
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
			return (jp_number(j));
		return (jp_fail(j, "unexpected byte"));
	}
}

int
jsonpick(const char *buf, size_t len, const char *const *path, char **out,
    char **cause)
{
	struct jp	j;

	memset(&j, 0, sizeof j);
	j.start = j.p = (const unsigned char *)buf;
	j.end = j.p + len;
	j.path = path;
	*out = NULL;
	jp_ws(&j);
	if (jp_value(&j, 0) == 0) {
		jp_ws(&j);
		if (j.p != j.end)
			(void)jp_fail(&j, "more after the value");
	}
	if (j.cause != NULL) {
		free(j.found);
		*cause = j.cause;
		return (-1);
	}
	*out = j.found;
	return (0);
}
