/*
 * claim.c owns DRA claims in the policy (SPEC R-CLAIM-1..9, anchor §9.4):
 * reading allocation results, picking each node's CPUs with the CPU
 * allocator, holding the union as one grant reserved from the deepest pool
 * that has all of it, the CDI edits, re-prepare, release, and moving the
 * containers pinned to a released claim.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpualloc.h"
#include "policy_priv.h"
#include "quantity.h"
#include "xmalloc.h"

struct claim_req {
	const struct dradev	*dev;
	int			 cpus;
};

static const struct dradev *
find_device(const struct policy *P, const char *name)
{
	int	i, node;

	if (name == NULL || (node = dradev_parse_name(name)) < 0)
		return (NULL);
	for (i = 0; i < P->ndevs; i++)
		if (P->devs[i].node == node)
			return (&P->devs[i]);
	return (NULL);
}

/* The results as CPUs per node, checked against the devices we offer. */
static int
claim_requests(const struct policy *P, const struct claim_result *res, int n,
    struct claim_req *reqs, char **cause)
{
	long long	milli;
	char		*why = NULL;
	int		 i;

	if (n <= 0) {
		xasprintf(cause, "no allocation results");
		return (-EINVAL);
	}
	if (n > POLICY_MAX_RESULTS) {
		xasprintf(cause, "%d allocation results, at most %d", n,
		    POLICY_MAX_RESULTS);
		return (-EINVAL);
	}
	for (i = 0; i < n; i++) {
		if ((reqs[i].dev = find_device(P, res[i].device)) == NULL) {
			xasprintf(cause, "result %d: unknown device \"%s\"", i,
			    res[i].device ? res[i].device : "");
			return (-EINVAL);
		}
		if (res[i].cpu == NULL) {
			xasprintf(cause, "result %d consumed no dra.cpu/cpu", i);
			return (-EINVAL);
		}
		if (quantity_parse_milli(res[i].cpu, &milli, &why) != 0 ||
		    milli < 1000 || milli % 1000 != 0) {
			free(why);
			xasprintf(cause, "result %d consumed %s dra.cpu/cpu, not "
			    "a positive whole number", i, res[i].cpu);
			return (-EINVAL);
		}
		if (milli / 1000 > reqs[i].dev->cpus) {
			xasprintf(cause, "result %d consumed %lld CPUs of node "
			    "#%d, which offers %d", i, milli / 1000,
			    reqs[i].dev->node, reqs[i].dev->cpus);
			return (-EINVAL);
		}
		reqs[i].cpus = (int)(milli / 1000);
	}
	return (0);
}

/* A held claim must hold, node by node, what its results consumed. */
static int
check_held(const struct cpuset *held, const struct claim_req *reqs, int n,
    char **cause)
{
	int	i, j, total = 0, want, have;

	for (i = 0; i < n; i++)
		total += reqs[i].cpus;
	if (cpuset_count(held) != total) {
		xasprintf(cause, "holds %d CPUs but consumed %d",
		    cpuset_count(held), total);
		return (-EINVAL);
	}
	for (i = 0; i < n; i++) {
		want = 0;
		for (j = 0; j < n; j++)
			if (reqs[j].dev->node == reqs[i].dev->node)
				want += reqs[j].cpus;
		have = cpuset_and_count(held, &reqs[i].dev->grantable);
		if (have != want) {
			xasprintf(cause, "holds %d CPUs of node #%d but consumed "
			    "%d", have, reqs[i].dev->node, want);
			return (-EINVAL);
		}
	}
	return (0);
}

/*
 * n free CPUs of a node, picked by topology from what its pool can give:
 * free isolated CPUs and the sharable ones that can be sliced off, less
 * reserved ones and those earlier results took.
 */
static int
pick_node_cpus(const struct policy *P, const struct claim_req *req,
    const struct cpuset *taken, struct cpuset *out, char **cause)
{
	const struct pool	*p;
	struct cpuset		 from = CPUSET_INITIALIZER;
	char			*why = NULL;
	int			 rc = 0;

	p = pool_tree_for_cpus(P->tree, &req->dev->grantable);
	supply_sliceable(P, p, &from);
	cpuset_or(&from, &P->sup[p->id].isolated);
	cpuset_andnot(&from, &p->reserved);
	cpuset_and(&from, &req->dev->grantable);
	cpuset_andnot(&from, taken);
	if (cpuset_count(&from) < req->cpus) {
		xasprintf(cause, "node #%d: %d CPUs requested, only %d free",
		    req->dev->node, req->cpus, cpuset_count(&from));
		rc = -ENOSPC;
	} else if (cpualloc_pick(P->alloc, &from, req->cpus,
	    P->cfg->default_prio, CPUALLOC_ALL, out, &why) != 0) {
		xasprintf(cause, "node #%d: %s", req->dev->node, why);
		free(why);
		rc = -ENOSPC;
	}
	cpuset_clear(&from);
	return (rc);
}

static void
claim_edits(const char *uid, const struct cpuset *cpus, int n,
    struct policy_effects *fx)
{
	char	*set = cpuset_format(cpus);
	int	 i;

	cpuset_copy(&fx->claim_cpus, cpus);
	fx->edits = xcalloc((size_t)n, sizeof *fx->edits);
	for (i = 0; i < n; i++)
		xasprintf(&fx->edits[i], "%s%s=%s", DRA_ENV_PREFIX, uid, set);
	fx->nedits = n;
	free(set);
}

int
claim_reinstate(struct policy *P, const char *uid, const struct cpuset *cpus,
    char **cause)
{
	struct grant	*g;
	char		*why = NULL;

	g = grant_new(uid, GRANT_CLAIM);
	cpuset_copy(&g->exclusive, cpus);
	g->pool = pool_tree_for_cpus(P->tree, cpus);
	g->type = CPU_NORMAL;
	if (supply_reserve(P, g, &why) != 0) {
		xasprintf(cause, "claim %s: %s", uid, why);
		free(why);
		grant_free(g);
		return (-EBUSY);
	}
	strmap_put(P->claims, g->key, g);
	return (0);
}

int
policy_claim(struct policy *P, const char *uid, const struct claim_result *res,
    int n, struct policy_effects *fx, char **cause)
{
	struct claim_req	*reqs = NULL;
	struct grant		*g;
	struct cpuset		 all = CPUSET_INITIALIZER;
	struct cpuset		 pick = CPUSET_INITIALIZER;
	int			 i, rc;

	if ((rc = request_check_id("claim UID", uid, cause)) != 0)
		return (rc);
	reqs = xcalloc(n > 0 ? (size_t)n : 1, sizeof *reqs);
	if ((rc = claim_requests(P, res, n, reqs, cause)) != 0)
		goto out;

	if ((g = strmap_get(P->claims, uid)) != NULL) {
		/* Prepared again: the same CPUs, nothing taken anew. */
		if ((rc = check_held(&g->exclusive, reqs, n, cause)) == 0)
			claim_edits(uid, &g->exclusive, n, fx);
		goto out;
	}
	if (strmap_count(P->claims) >= POLICY_MAX_CLAIMS) {
		xasprintf(cause, "already %d claims", POLICY_MAX_CLAIMS);
		rc = -ENOSPC;
		goto out;
	}
	/* Nothing changes until the union is reserved as a whole. */
	for (i = 0; i < n; i++) {
		if ((rc = pick_node_cpus(P, &reqs[i], &all, &pick, cause)) != 0)
			goto out;
		cpuset_or(&all, &pick);
	}
	if ((rc = claim_reinstate(P, uid, &all, cause)) != 0) {
		/* Say which claim, not twice: claim_reinstate names it. */
		goto out;
	}
	claim_edits(uid, &all, n, fx);
	policy_refresh(P, NULL, 0, fx);
	fx->save = 1;
out:
	cpuset_clear(&all);
	cpuset_clear(&pick);
	free(reqs);
	return (rc);
}

/* Containers pinned to a released claim keep the other claims they name,
 * or become ordinary containers again. */
static void
unpin_containers(struct policy *P, const char *uid, struct policy_effects *fx)
{
	struct grant	**v, *g, *ng;
	const struct cpuset *held;
	char		*why = NULL;
	size_t		 i, n;
	int		 j, k;

	v = (struct grant **)strmap_values(P->ctrs, &n);
	for (i = 0; i < n; i++) {
		g = v[i];
		if (g->kind != GRANT_CLAIM_PINNED)
			continue;
		for (j = k = 0; j < g->nclaims; j++) {
			if (strcmp(g->claims[j], uid) == 0)
				free(g->claims[j]);
			else
				g->claims[k++] = g->claims[j];
		}
		if (k == g->nclaims)
			continue;
		g->nclaims = k;
		g->dirty = 1;
		cpuset_zero(&g->exclusive);
		for (j = 0; j < k; j++)
			if ((held = policy_claim_cpus(P, g->claims[j])) != NULL)
				cpuset_or(&g->exclusive, held);
		if (k > 0)
			continue;
		/* Its claim is gone: an ordinary container from now on. */
		ng = grant_new(g->key, GRANT_CONTAINER);
		cspec_dup(&ng->spec, &g->spec);
		if (request_from_spec(P, &ng->spec, &ng->req, &why) != 0 ||
		    policy_allocate_container(P, ng, NULL, &why) != 0) {
			policy_warn(fx, "%s", why ? why : "allocation failed");
			grant_fallback(P, ng);
		}
		free(why);
		why = NULL;
		ng->dirty = 1;
		pinning_copy(&ng->applied, &g->applied);
		strmap_put(P->ctrs, ng->key, ng);
		grant_free(g);
	}
	free(v);
}

int
policy_release(struct policy *P, const char *uid, struct policy_effects *fx)
{
	struct grant	*g;

	/* The kubelet may unprepare a claim more than once. */
	if ((g = strmap_del(P->claims, uid)) == NULL)
		return (0);
	supply_release(P, g);
	grant_free(g);
	unpin_containers(P, uid, fx);
	policy_refresh(P, NULL, 0, fx);
	fx->save = 1;
	return (0);
}
