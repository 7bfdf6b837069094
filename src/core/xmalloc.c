/*
 * xmalloc.c owns the allocation wrappers of xmalloc.h: each one either
 * succeeds or aborts with a message on stderr.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

static void __attribute__((__noreturn__))
xmalloc_die(const char *what, size_t n)
{
	fprintf(stderr, "topoaware: %s: out of memory (%zu bytes)\n", what, n);
	abort();
}

void *
xmalloc(size_t n)
{
	void	*p;

	if (n == 0)
		n = 1;
	if ((p = malloc(n)) == NULL)
		xmalloc_die("xmalloc", n);
	return (p);
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void	*p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = calloc(nmemb, size)) == NULL)
		xmalloc_die("xcalloc", nmemb * size);
	return (p);
}

void *
xreallocarray(void *old, size_t nmemb, size_t size)
{
	void	*p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		xmalloc_die("xreallocarray", SIZE_MAX);
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	if ((p = realloc(old, nmemb * size)) == NULL)
		xmalloc_die("xreallocarray", nmemb * size);
	return (p);
}

void *
xscratch(void *buf, size_t bufsize, size_t n, size_t size)
{
	if (size != 0 && n > bufsize / size)
		return (xcalloc(n, size));
	memset(buf, 0, n * size);
	return (buf);
}

void
xscratch_free(void *p, const void *buf)
{
	if (p != buf)
		free(p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		xmalloc_die("xstrdup", strlen(s) + 1);
	return (p);
}

char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	if ((p = strndup(s, n)) == NULL)
		xmalloc_die("xstrndup", n + 1);
	return (p);
}

char *
xstrcat3(const char *a, const char *b, const char *c)
{
	size_t	la = strlen(a), lb = strlen(b), lc = strlen(c);
	char	*p;

	p = xmalloc(la + lb + lc + 1);
	memcpy(p, a, la);
	memcpy(p + la, b, lb);
	memcpy(p + la + lb, c, lc + 1);
	return (p);
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		xmalloc_die("xasprintf", 0);
	return (n);
}
