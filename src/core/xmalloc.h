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
int xasprintf(char **, const char *, ...)
    __attribute__((__format__(__printf__, 2, 3)));

#endif
