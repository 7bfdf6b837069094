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

/*
 * Starts connecting at once, and reconnects with backoff (100 ms doubling
 * up to opts.nri_backoff_max_ms) whenever the runtime is absent, goes
 * away or sends what no runtime sends. Fails only when the loop cannot
 * take its events; an absent runtime is not an error.
 */
int	nri_new(struct server *, struct nri **, char **);
void	nri_free(struct nri *);
int	nri_connected(const struct nri *);
/* The runtime has sent its whole Synchronize since we last connected. */
int	nri_synchronized(const struct nri *);
/*
 * Queues UpdateContainers for the containers of these updates: each is
 * sent once, with the pinning the policy holds for it when it goes (a
 * container it no longer holds is left out), from the loop after
 * any reply being built now; never waits for the runtime's answer inside
 * a handler. Dropped while disconnected: the next Synchronize reconciles.
 * Does not call back.
 */
void	nri_push_updates(struct nri *, const struct policy_update *, int);
/*
 * A loop turn's changes are durable and its answers out (server.c): what
 * its events queued goes now. While a turn's answers wait for its journal
 * sync, nothing queued is made into requests, so they do not wait for
 * that work too.
 */
void	nri_turn_done(struct nri *);
/* {"connected","registered","synchronized","error","socket","connects",
 * "failedUpdates"}: a new reference. */
json_t	*nri_status(const struct nri *);

#endif
