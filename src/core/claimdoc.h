/*
 * What a ResourceClaim object from the API server says to us (protocols.md
 * 4.3 and 7.3): that it is the claim the kubelet named (same UID), that it
 * is allocated, and which allocation results are ours. Only reads JSON;
 * the results are checked further by the policy (R-CLAIM).
 */
#ifndef TOPOAWARE_CLAIMDOC_H
#define TOPOAWARE_CLAIMDOC_H

#include <jansson.h>

#include "policy.h"

/* Kubernetes allows at most this many allocation results per claim. */
#define CLAIMDOC_MAX_RESULTS	32
/* The consumed capacity our devices offer. */
#define CLAIMDOC_CPU_CAPACITY	"dra.cpu/cpu"

struct claimdoc_result {
	char	*request;	/* base request name, "/sub" cut off */
	char	*pool;
	char	*device;
	char	*share_id;	/* NULL when the result has none */
	char	*cpu;		/* consumed dra.cpu/cpu as text, or NULL */
};

struct claimdoc {
	int			 n;
	struct claimdoc_result	*results;
	char			*ns;		/* metadata.namespace */
	char			*name;		/* metadata.name */
	int			 npods;
	char			**pods;		/* reservedFor pod UIDs */
};

/*
 * Reads the claim object obj for the kubelet's uid, keeping the results
 * of driver in the allocation's order. Each must name pool (our node's).
 * Returns 0, or -EINVAL with a cause for the kubelet: a UID that is not
 * uid, no allocation, no results of driver ("no allocation results"),
 * too many results, a malformed result.
 */
int	claimdoc_parse(json_t *obj, const char *uid, const char *driver,
	    const char *pool, struct claimdoc **, char **cause);
void	claimdoc_free(struct claimdoc *);	/* NULL is a no-op */

/*
 * Only who consumes the claim: its metadata and the pod UIDs of its
 * status.reservedFor (entries of resource "pods" in the core group; at
 * most POLICY_MAX_CONSUMERS). For a claim prepared before, whose
 * results need not be read again. A missing reservedFor is an empty one.
 */
int	claimdoc_parse_consumers(json_t *obj, const char *uid,
	    struct claimdoc **, char **cause);

/* The policy's view of the consumers: m borrows from doc. */
void	claimdoc_policy_meta(const struct claimdoc *, struct claim_meta *);

/* The policy's view of the results: res[i] borrows from doc. */
void	claimdoc_policy_results(const struct claimdoc *,
	    struct claim_result *res);

#endif
