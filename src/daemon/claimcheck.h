/*
 * Who consumes a held claim, read again from the API server (R-CLAIM-9).
 * A claim's CPUs go only to containers of the pods its ResourceClaim
 * names in status.reservedFor. Those are read when the kubelet prepares
 * the claim, but the kubelet prepares a claim once however many pods come
 * to share it: when a container names a held claim and its pod is not
 * among the consumers known, the claim is read again and the policy told
 * what it says (server_claim_consumers), which pins the containers of
 * pods now listed.
 */
#ifndef TOPOAWARE_CLAIMCHECK_H
#define TOPOAWARE_CLAIMCHECK_H

/* Named limits (topoawared(8) lists them). */
#define CLAIMCHECK_INTERVAL_MS	500	/* between two reads of one claim */
#define CLAIMCHECK_ANSWER_MS	1000	/* a create waits this long at most */

struct server;
struct kube;
struct claimcheck;
struct claimcheck_wait;

/* Called once when the read ends (done or failed), after the policy has
 * what it said; w is invalid once this returns. */
typedef void	(*claimcheck_cb)(void *arg, struct claimcheck_wait *w);

struct claimcheck *claimcheck_new(struct server *, struct kube *);
/* Waiters are called (the read did not end) before it goes. NULL: no-op. */
void	claimcheck_free(struct claimcheck *);

/*
 * Reads held claim uid again, or joins the read in flight or planned (a
 * claim read less than CLAIMCHECK_INTERVAL_MS ago is read again when that
 * has passed). Returns NULL, and never calls cb, when the claim is not
 * held. cb may be NULL: read, nobody waits. cb never runs inside this
 * call.
 */
struct claimcheck_wait *claimcheck_read(struct claimcheck *, const char *uid,
	    claimcheck_cb, void *arg);
/* The waiter is forgotten; the read goes on. */
void	claimcheck_cancel(struct claimcheck_wait *);
/* Reads every held claim whose consumers were never read (saved by an
 * older version), in one list of all claims when their names are not
 * known either. */
void	claimcheck_unknown(struct claimcheck *);

#endif
