/*
 * Allocation that never returns NULL. Running out of memory in the middle
 * of a policy transaction leaves nothing sane to roll back to, so, as in
 * tmux and OpenSMTPD, it aborts the process; systemd restarts it and the
 * saved state brings every grant back.
 */
#ifndef TOPOAWARE_XMALLOC_H
#define TOPOAWARE_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *);
char *xstrndup(const char *, size_t);
/* a, b and c end to end, in a new string: the paths made for every
 * container of a Synchronize, where xasprintf's reading of its format
 * costs several times the copying. */
char *xstrcat3(const char *, const char *, const char *);
/*
 * n zeroed elements of size bytes each: buf when they fit in its bufsize
 * bytes, else from the heap. A per-event scratch array sized by the pool
 * tree fits a caller's stack on every real machine, and a malloc and free
 * for each of a Synchronize's thousand containers cost more than the work
 * done in it. Give it back with xscratch_free(p, buf).
 */
void *xscratch(void *buf, size_t bufsize, size_t n, size_t size);
void xscratch_free(void *p, const void *buf);
int xasprintf(char **, const char *, ...)
    __attribute__((__format__(__printf__, 2, 3)));

#endif
