/*
 * The admin socket (SPEC R-ADMIN): newline-delimited JSON requests from
 * topoawarectl on a unix socket of mode 0600, accepted from uid 0 and our
 * own uid only.
 */
#ifndef TOPOAWARE_ADMIN_H
#define TOPOAWARE_ADMIN_H

struct server;
struct admin;

int	admin_new(struct server *, const char *path, struct admin **, char **);
void	admin_free(struct admin *);

#endif
