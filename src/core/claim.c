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

/* A claim UID becomes a state key, a file name and CDI device names. */
#define CLAIM_UID_MAX	128

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
    const struct cpuset *taken, struct cpuset *out, unsigned *steps,
    char **cause)
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
	} else
		*steps |= cpualloc_last_steps(P->alloc);
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

const char **
policy_claim_uids(const struct policy *P, size_t *n)
{
	struct grant	**v = policy_sorted(P->claims, n);
	const char	**u;
	size_t		  i;

	u = xcalloc(*n + 1, sizeof *u);
	for (i = 0; i < *n; i++)
		u[i] = v[i]->key;
	free(v);
	return (u);
}

int
policy_claim_edits(const struct policy *P, const char *uid, char ***edits)
{
	struct policy_effects	 fx;
	const struct grant	*g;
	int			 n;

	*edits = NULL;
	if ((g = strmap_get(P->claims, uid)) == NULL)
		return (-1);
	if (g->nresults <= 0)
		return (0);
	policy_effects_init(&fx);
	claim_edits(uid, &g->exclusive, g->nresults, &fx);
	*edits = fx.edits;
	n = fx.nedits;
	fx.edits = NULL;
	fx.nedits = 0;
	policy_effects_clear(&fx);
	return (n);
}

/*
 * The one rule for claim UIDs, from the kubelet and from the saved state
 * alike: 1 to CLAIM_UID_MAX letters, digits, '-', '_', '.' and ':', not
 * ".", no "..", so that no UID can reach outside a folder.
 */
int
claim_check_uid(const char *uid, char **cause)
{
	const char	*p;
	size_t		 len;

	len = uid == NULL ? 0 : strlen(uid);
	if (len == 0 || len > CLAIM_UID_MAX || strcmp(uid, ".") == 0 ||
	    strstr(uid, "..") != NULL)
		goto bad;
	for (p = uid; *p != '\0'; p++) {
		if ((*p < 'a' || *p > 'z') && (*p < 'A' || *p > 'Z') &&
		    (*p < '0' || *p > '9') && *p != '-' && *p != '_' &&
		    *p != '.' && *p != ':')
			goto bad;
	}
	return (0);
bad:
	if (cause == NULL)
		return (-EINVAL);
	if (uid != NULL && request_check_id("", uid, NULL) == 0)
		xasprintf(cause, "claim UID \"%.*s\" is not 1 to %d letters, "
		    "digits, -, _, . and :, or is \".\" or holds \"..\"", 80,
		    uid, CLAIM_UID_MAX);
	else
		xasprintf(cause, "claim UID is not 1 to %d letters, digits, "
		    "-, _, . and :", CLAIM_UID_MAX);
	return (-EINVAL);
}

static void
strv_free(char **v, int n)
{
	int	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Replaces what g knows of its consumers with m (NULL: unknown). */
void
claim_set_meta(struct grant *g, const struct claim_meta *m)
{
	int	i;

	free(g->claim_ns);
	free(g->claim_name);
	strv_free(g->consumers, g->nconsumers);
	g->claim_ns = g->claim_name = NULL;
	g->consumers = NULL;
	g->nconsumers = 0;
	g->consumers_known = 0;
	if (m == NULL)
		return;
	g->claim_ns = m->ns != NULL ? xstrdup(m->ns) : NULL;
	g->claim_name = m->name != NULL ? xstrdup(m->name) : NULL;
	if (!m->known)
		return;
	g->consumers_known = 1;
	g->consumers = xcalloc((size_t)m->npods + 1, sizeof *g->consumers);
	for (i = 0; i < m->npods && i < POLICY_MAX_CONSUMERS; i++)
		g->consumers[g->nconsumers++] = xstrdup(m->pods[i]);
}

void
claim_copy_meta(struct grant *dst, const struct grant *src)
{
	struct claim_meta	m;

	m.ns = src->claim_ns;
	m.name = src->claim_name;
	m.pods = (const char *const *)src->consumers;
	m.npods = src->nconsumers;
	m.known = src->consumers_known;
	claim_set_meta(dst, &m);
	dst->nresults = src->nresults;
}

/* At most POLICY_MAX_CONSUMERS entries: a scan is cheap. */
int
claim_has_consumer(const struct grant *g, const char *pod_uid)
{
	int	i;

	if (pod_uid == NULL)
		return (0);
	for (i = 0; i < g->nconsumers; i++)
		if (strcmp(g->consumers[i], pod_uid) == 0)
			return (1);
	return (0);
}

/*
 * Remembers that container id waits for claim g's consumers to be read
 * again. Entries of containers gone are dropped first; when it is still
 * full the oldest goes: a hint lost only delays a pinning until the
 * container is created again.
 */
void
claim_wait(struct policy *P, struct grant *g, const char *id)
{
	int	i, k;

	for (i = 0; i < g->nwaiting; i++)
		if (strcmp(g->waiting[i], id) == 0)
			return;
	if (g->nwaiting >= POLICY_MAX_WAITING) {
		for (i = k = 0; i < g->nwaiting; i++) {
			if (strmap_get(P->ctrs, g->waiting[i]) == NULL)
				free(g->waiting[i]);
			else
				g->waiting[k++] = g->waiting[i];
		}
		g->nwaiting = k;
	}
	if (g->nwaiting >= POLICY_MAX_WAITING) {
		free(g->waiting[0]);
		memmove(g->waiting, g->waiting + 1,
		    (size_t)(g->nwaiting - 1) * sizeof *g->waiting);
		g->nwaiting--;
	}
	if (g->waiting == NULL)
		g->waiting = xcalloc(POLICY_MAX_WAITING, sizeof *g->waiting);
	g->waiting[g->nwaiting++] = xstrdup(id);
}

/* A container goes: out of the waiting lists of the claims it names. */
void
claim_unwait(struct policy *P, const struct grant *c)
{
	struct grant	*g;
	const char	*uid;
	int		 i, j;

	for (i = 0; i < c->spec.nenv; i++) {
		uid = c->spec.env[i].key + strlen(DRA_ENV_PREFIX);
		if ((g = strmap_get(P->claims, uid)) == NULL)
			continue;
		for (j = 0; j < g->nwaiting; j++) {
			if (strcmp(g->waiting[j], c->key) != 0)
				continue;
			free(g->waiting[j]);
			memmove(g->waiting + j, g->waiting + j + 1,
			    (size_t)(g->nwaiting - j - 1) * sizeof *g->waiting);
			g->nwaiting--;
			break;
		}
	}
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
	policy_put(P, 1, g->key, g);
	return (0);
}

/* The consumers from the API: bounded, each a plain id. */
static int
check_meta(const struct claim_meta *m, char **cause)
{
	int	i;

	if (m == NULL || !m->known)
		return (0);
	if (m->npods < 0 || m->npods > POLICY_MAX_CONSUMERS ||
	    (m->npods > 0 && m->pods == NULL)) {
		xasprintf(cause, "%d consumers, at most %d", m->npods,
		    POLICY_MAX_CONSUMERS);
		return (-EINVAL);
	}
	for (i = 0; i < m->npods; i++)
		if (request_check_id("consumer pod UID", m->pods[i],
		    cause) != 0)
			return (-EINVAL);
	return (0);
}

int
policy_claim(struct policy *P, const char *uid, const struct claim_result *res,
    int n, const struct claim_meta *meta, struct policy_effects *fx,
    char **cause)
{
	struct undoctx		 u;
	struct claim_req	*reqs = NULL;
	struct grant		*g;
	struct cpuset		 all = CPUSET_INITIALIZER;
	struct cpuset		 pick = CPUSET_INITIALIZER;
	unsigned		 steps = 0;
	int			 i, rc;

	if ((rc = claim_check_uid(uid, cause)) != 0 ||
	    (rc = check_meta(meta, cause)) != 0)
		return (rc);
	undo_begin(P, fx, &u);
	reqs = xcalloc(n > 0 ? (size_t)n : 1, sizeof *reqs);
	if ((rc = claim_requests(P, res, n, reqs, cause)) != 0)
		goto out;

	if ((g = strmap_get(P->claims, uid)) != NULL) {
		/* Prepared again: the same CPUs, nothing taken anew; what
		 * the API says of its consumers now is the truth. */
		if ((rc = check_held(&g->exclusive, reqs, n, cause)) != 0)
			goto out;
		claim_edits(uid, &g->exclusive, n, fx);
		if (meta != NULL && meta->known)
			rc = policy_claim_consumers(P, uid, meta, fx, cause);
		goto out;
	}
	if (strmap_count(P->claims) >= POLICY_MAX_CLAIMS) {
		xasprintf(cause, "already %d claims", POLICY_MAX_CLAIMS);
		rc = -ENOSPC;
		goto out;
	}
	/* Nothing changes until the union is reserved as a whole. */
	for (i = 0; i < n; i++) {
		if ((rc = pick_node_cpus(P, &reqs[i], &all, &pick, &steps,
		    cause)) != 0)
			goto out;
		cpuset_or(&all, &pick);
	}
	if ((rc = claim_reinstate(P, uid, &all, cause)) != 0) {
		/* Say which claim, not twice: claim_reinstate names it. */
		goto out;
	}
	g = strmap_get(P->claims, uid);
	claim_set_meta(g, meta);
	g->nresults = n;
	g->picked_by = steps;
	claim_edits(uid, &all, n, fx);
	policy_refresh(P, NULL, 0, fx);
	fx->save = 1;
out:
	if (rc != 0)
		undo_fail(P, &u);
	undo_end(P, &u);
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

	v = index_pinned(P, uid, &n);
	for (i = 0; i < n; i++) {
		g = v[i];
		if (g->kind != GRANT_CLAIM_PINNED)
			continue;
		for (j = 0; j < g->nclaims; j++)
			if (strcmp(g->claims[j], uid) == 0)
				break;
		if (j == g->nclaims)
			continue;
		/* A copy changes; g is kept for an undo. */
		ng = grant_dup(g);
		for (j = k = 0; j < ng->nclaims; j++) {
			if (strcmp(ng->claims[j], uid) == 0)
				free(ng->claims[j]);
			else
				ng->claims[k++] = ng->claims[j];
		}
		ng->nclaims = k;
		ng->dirty = 1;
		/* Its memory follows the claims it keeps, or its pool. */
		policy_mem_drop(P, g->key);
		cpuset_zero(&ng->exclusive);
		for (j = 0; j < k; j++)
			if ((held = policy_claim_cpus(P, ng->claims[j])) !=
			    NULL)
				cpuset_or(&ng->exclusive, held);
		if (k == 0) {
			/* Its claim is gone: an ordinary container now. */
			grant_free(ng);
			ng = grant_new(g->key, GRANT_CONTAINER);
			cspec_dup(&ng->spec, &g->spec);
			if (request_from_spec(P, &ng->spec, &ng->req,
			    &why) != 0 ||
			    policy_allocate_container(P, ng, NULL, NULL, fx,
			    &why) != 0) {
				policy_warn(fx, "%s", why ? why :
				    "allocation failed");
				grant_fallback(P, ng);
			}
			free(why);
			why = NULL;
			ng->dirty = 1;
			pinning_copy(&ng->applied, &g->applied);
		} else
			(void)policy_mem_take(P, ng, NULL, 1, NULL);
		policy_put(P, 0, ng->key, ng);
	}
	free(v);
}

int
policy_release(struct policy *P, const char *uid, struct policy_effects *fx)
{
	struct undoctx	 u;
	struct grant	*g;

	/* The kubelet may unprepare a claim more than once. */
	if ((g = strmap_get(P->claims, uid)) == NULL)
		return (0);
	undo_begin(P, fx, &u);
	supply_release(P, g);
	policy_put(P, 1, uid, NULL);
	unpin_containers(P, uid, fx);
	policy_refresh(P, NULL, 0, fx);
	fx->save = 1;
	undo_end(P, &u);
	return (0);
}

static int
meta_same(const struct grant *g, const struct claim_meta *m)
{
	int	i;

	if (!g->consumers_known || g->nconsumers != m->npods)
		return (0);
	if ((g->claim_ns == NULL) != (m->ns == NULL) ||
	    (g->claim_ns != NULL && strcmp(g->claim_ns, m->ns) != 0) ||
	    (g->claim_name == NULL) != (m->name == NULL) ||
	    (g->claim_name != NULL && strcmp(g->claim_name, m->name) != 0))
		return (0);
	for (i = 0; i < m->npods; i++)
		if (strcmp(g->consumers[i], m->pods[i]) != 0)
			return (0);
	return (1);
}

int
policy_claim_consumers(struct policy *P, const char *uid,
    const struct claim_meta *meta, struct policy_effects *fx, char **cause)
{
	struct undoctx	  u;
	struct grant	 *g, *c;
	char		**w, *why = NULL;
	int		  nw, i, rc, moved = 0, changed;

	if ((g = strmap_get(P->claims, uid)) == NULL) {
		xasprintf(cause, "claim %s is not held", uid);
		return (-ENOENT);
	}
	if (meta == NULL || !meta->known) {
		xasprintf(cause, "claim %s: no consumers given", uid);
		return (-EINVAL);
	}
	if ((rc = check_meta(meta, cause)) != 0)
		return (rc);
	undo_begin(P, fx, &u);
	/* A copy changes; g is kept for an undo. */
	if ((changed = !meta_same(g, meta))) {
		g = grant_dup(g);
		claim_set_meta(g, meta);
		policy_put(P, 1, uid, g);
	}
	/* Taken out first: pinning may make others wait on claims. */
	w = g->waiting;
	nw = g->nwaiting;
	g->waiting = NULL;
	g->nwaiting = 0;
	for (i = 0; i < nw; i++) {
		c = strmap_get(P->ctrs, w[i]);
		if (c != NULL && !claim_has_consumer(g, c->spec.pod_uid)) {
			claim_wait(P, g, w[i]);
			continue;
		}
		if (c != NULL) {
			if (policy_repin(P, c, fx, &why) != 0) {
				policy_warn(fx, "container %s: not pinned to "
				    "claim %s: %s", w[i], uid, why);
				free(why);
				why = NULL;
			} else
				moved = 1;
		}
	}
	for (i = 0; i < nw; i++)
		free(w[i]);
	free(w);
	if (moved)
		policy_refresh(P, NULL, 0, fx);
	if (changed || moved)
		fx->save = 1;
	undo_end(P, &u);
	return (0);
}

int
policy_claims_unknown(const struct policy *P, char ***out)
{
	struct grant	**v;
	size_t		  i, n;
	int		  k = 0;

	*out = NULL;
	v = policy_sorted(P->claims, &n);
	for (i = 0; i < n; i++) {
		if (v[i]->consumers_known)
			continue;
		*out = xreallocarray(*out, k + 1, sizeof **out);
		(*out)[k++] = xstrdup(v[i]->key);
	}
	free(v);
	return (k);
}

int
policy_claim_ref(const struct policy *P, const char *uid, const char **ns,
    const char **name)
{
	const struct grant	*g = strmap_get(P->claims, uid);

	if (g == NULL)
		return (-ENOENT);
	*ns = g->claim_ns;
	*name = g->claim_name;
	return (0);
}
