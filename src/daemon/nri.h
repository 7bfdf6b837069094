/*
 * The NRI plugin: a connection to the container runtime's NRI socket, the
 * multiplexer and ttrpc on it, registration, and the events a CPU and
 * memory policy needs (SPEC R-NRI), turned into server operations.
 */
#ifndef TOPOAWARE_NRI_H
#define TOPOAWARE_NRI_H

#include "policy.h"

struct server;
struct nri;

/* Starts connecting (and reconnecting with backoff) at once. */
int	nri_new(struct server *, struct nri **, char **);
void	nri_free(struct nri *);
int	nri_connected(const struct nri *);
/* The runtime has sent its whole Synchronize since we last connected. */
int	nri_synchronized(const struct nri *);
/* Queues UpdateContainers for these pinnings, sent after any reply being
 * built now; never waits for the runtime's answer inside a handler. */
void	nri_push_updates(struct nri *, const struct pinning *, int);
json_t	*nri_status(const struct nri *);

#endif
