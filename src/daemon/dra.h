/*
 * The kubelet DRA plugin (SPEC R-DRA, protocols.md 3 and 4): the DRA gRPC
 * service (v1 and v1beta1) at <kubelet-dir>/plugins/<driver>/dra.sock,
 * then the registration socket. NodePrepareResources reads each claim
 * from the API server, claims its CPUs through the server (saved before
 * anyone is told), writes the claim's CDI spec and only then answers;
 * NodeUnprepareResources releases and removes the spec.
 */
#ifndef TOPOAWARE_DRA_H
#define TOPOAWARE_DRA_H

#include <jansson.h>

/* Named limits (topoawared(8) lists them). */
#define DRA_MAX_CLAIMS		64	/* claims in one call */
#define DRA_MAX_INFLIGHT	256	/* claims being prepared at once */

struct server;
struct kube;
struct dra;

/* Listens on both sockets (the DRA one first). The driver name and the
 * folders come from the server's config and options. */
int	dra_new(struct server *, struct kube *, struct dra **, char **);
/* Answers calls still waiting with UNAVAILABLE, removes both sockets.
 * NULL is a no-op. */
void	dra_free(struct dra *);
/*
 * What a loop turn leaves for after its answers: the CDI spares its specs
 * used are made again (DRA_CDI_AHEAD of them kept ready). After a failure
 * (a full or read-only folder) it waits DRA_CDI_AHEAD_RETRY_MS before
 * trying again; meanwhile specs are written the usual way.
 */
#define DRA_CDI_AHEAD		8
#define DRA_CDI_AHEAD_RETRY_MS	30000
void	dra_turn_done(struct dra *);
/* Whether the kubelet has accepted our registration. */
int	dra_registered(const struct dra *);
/* {"registered","error","socket","registrationSocket","inFlight"}. */
json_t	*dra_status(const struct dra *);

#endif
