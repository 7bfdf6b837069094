/*
 * memgrant.c accounts the memory of container grants in the policy's
 * allocator (memalloc.c, libmem's rules): each container's memory request
 * (its request, else its limit) is taken from a zone that starts at its
 * pool's nodes of its memory types, or its claims' nodes when it is
 * pinned to claims. Taking memory may widen the zones of other containers
 * (libmem's overcommit handling): those are marked for a refresh, so
 * their new memory nodes reach the runtime, and the change is logged for
 * an undo and for the journal. The allocator is the one truth about a
 * container's zone; the state text reads it from there.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "memzone.h"
#include "policy_priv.h"
#include "xmalloc.h"

void
policy_mem_init(struct policy *P)
{
	struct memalloc_node	*nodes;
	const struct topo_node	*n;
	char			*why = NULL;
	int			 i, nn = topology_nnodes(P->topo);

	P->mem = NULL;
	P->mem_total = 0;
	for (i = 0; i < nn; i++)
		P->mem_total += (long long)topology_node(P->topo, i)->memory;
	if (nn <= 0 || nn > MEMALLOC_MAX_NODES || P->mem_total <= 0)
		return;
	nodes = xcalloc((size_t)nn, sizeof *nodes);
	for (i = 0; i < nn; i++) {
		n = topology_node(P->topo, i);
		nodes[i].id = n->id;
		nodes[i].type = n->type;
		nodes[i].capacity = (long long)n->memory;
		/* The kernel's movable-only nodes are not told apart yet:
		 * every node with memory counts as normal memory. */
		nodes[i].normal = n->memory > 0;
		nodes[i].distance = n->distance;
		nodes[i].ndistance = nn;
	}
	P->mem = memalloc_new(nodes, nn, &why);
	/* A topology whose rows memalloc refuses keeps memory unaccounted,
	 * as with more nodes than a zone mask holds. */
	free(why);
	free(nodes);
}

void
policy_mem_free(struct policy *P)
{
	memalloc_free(P->mem);
	P->mem = NULL;
}

memmask_t
policy_mem_mask(const struct policy *P, const struct cpuset *nodes)
{
	memmask_t	m = 0;
	int		i, nn = topology_nnodes(P->topo);

	for (i = 0; i < nn && i < MEMALLOC_MAX_NODES; i++)
		if (cpuset_has(nodes, topology_node(P->topo, i)->id))
			m |= (memmask_t)1 << i;
	return (m);
}

void
policy_mem_nodes(const struct policy *P, memmask_t m, struct cpuset *out)
{
	uint64_t	low = 0;
	int		i, id, nn = topology_nnodes(P->topo);

	cpuset_zero(out);
	/* Set bit by set bit, ids below 64 gathered in one word: every
	 * container a claim moves has its zone's nodes made here. */
	for (; m != 0; m &= m - 1) {
		if ((i = __builtin_ctzll(m)) >= nn)
			break;
		if ((id = topology_node(P->topo, i)->id) < 64)
			low |= 1ULL << id;
		else
			(void)cpuset_add(out, id);
	}
	cpuset_add_low(out, low);
}

/* The nodes a request starts from in pool p (getMemOffer's affinity):
 * the pool's nodes of its types, all of them when it preserves. */
memmask_t
policy_mem_pool(const struct policy *P, const struct pool *p,
    const struct request *r)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	memmask_t	 m;
	int		 ty;

	if (r->mem_preserve)
		cpuset_copy(&s, &p->mems);
	else
		for (ty = MEM_TYPE_DRAM; ty <= MEM_TYPE_HBM; ty++)
			if (r->mem_types & (1u << ty))
				cpuset_or(&s, &p->mems_type[ty]);
	m = policy_mem_mask(P, &s);
	cpuset_clear(&s);
	return (m);
}

static enum memalloc_prio
prio_of(enum qos_class q)
{
	switch (q) {
	case QOS_GUARANTEED:
		return (MEMALLOC_GUARANTEED);
	case QOS_BURSTABLE:
		return (MEMALLOC_BURSTABLE);
	case QOS_BESTEFFORT:
		break;
	}
	return (MEMALLOC_BESTEFFORT);
}

static void
req_of(const char *key, const struct request *r, const struct cspec *c,
    memmask_t affinity, unsigned long long seq, struct memalloc_req *mr)
{
	memset(mr, 0, sizeof *mr);
	mr->id = key;
	mr->size = r->mem_req > 0 ? r->mem_req : r->mem_lim;
	mr->affinity = affinity;
	mr->types = r->mem_preserve ? 0 : r->mem_types;
	mr->prio = prio_of(c->qos);
	mr->seq = seq;
}

int
policy_mem_score(const struct policy *P, const struct pool *p,
    const char *key, const struct request *r, const struct cspec *c,
    memmask_t *zone)
{
	struct memalloc_req	 mr;
	char			*why = NULL;
	int			 rc;

	*zone = 0;
	req_of(key, r, c, policy_mem_pool(P, p, r), P->mem_seq + 1, &mr);
	if (mr.affinity == 0)
		return (-1);
	/* An offer puts the allocator back exactly as it was: scoring
	 * leaves the policy unchanged. */
	rc = memalloc_offer(P->mem, &mr, zone, NULL, &why);
	free(why);
	return (rc);
}

/* The grants whose zones the log moved, other than self: refreshed. */
static void
mark_moved(struct policy *P, const struct memalloc_log *log,
    const char *self)
{
	struct grant	*g;
	int		 i;

	for (i = 0; i < log->n; i++) {
		if (strcmp(log->v[i].id, self) == 0 ||
		    (log->v[i].present && log->v[i].zone == log->v[i].after))
			continue;
		if ((g = strmap_get(P->ctrs, log->v[i].id)) != NULL)
			index_dirty(P, g);
	}
}

/* The zone a claim-pinned container starts from: its claims' DRAM
 * nodes and what their pools offer its types (policy_claim_mems). */
static memmask_t
claims_affinity(const struct policy *P, const struct grant *g)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	memmask_t	 m;

	policy_claim_mems(P, g, &s);
	m = policy_mem_mask(P, &s);
	cpuset_clear(&s);
	return (m);
}

/*
 * Take g's memory: the saved zone when one is given (a grant carried or
 * restored), else a zone found by the allocator from g's pool or claims.
 * With force, a request the allocator cannot place is still accounted
 * on its starting zone (a claim's container, or one the runtime already
 * runs): overcommitted, but never lost. -1 with *cause otherwise.
 */
int
policy_mem_take(struct policy *P, struct grant *g, const struct cpuset *saved,
    int force, char **cause)
{
	struct memalloc_req	 mr;
	struct memalloc_log	 log = { NULL, 0, 0 };
	memmask_t		 aff, zone, want;
	char			*why = NULL;

	if (P->mem == NULL)
		return (0);
	if (g->kind == GRANT_CLAIM_PINNED)
		aff = claims_affinity(P, g);
	else if (g->pool != NULL)
		aff = policy_mem_pool(P, g->pool, &g->req);
	else
		return (0);
	if (aff == 0) {
		/* Nothing to start from (no node of its types): its memory
		 * is not accounted, as libmem refuses such a request. */
		return (0);
	}
	req_of(g->key, &g->req, &g->spec, aff, ++P->mem_seq, &mr);
	if (saved != NULL && (want = policy_mem_mask(P, saved)) != 0 &&
	    memalloc_restore(P->mem, &mr, want, NULL) == 0) {
		undo_mem_restored(P, g->key);
		return (0);
	}
	if (memalloc_allocate(P->mem, &mr, &log, &zone, &why) == 0) {
		mark_moved(P, &log, g->key);
		undo_mem(P, &log);
		free(why);
		return (0);
	}
	if (force && memalloc_restore(P->mem, &mr, aff, NULL) == 0) {
		undo_mem_restored(P, g->key);
		free(why);
		return (0);
	}
	if (cause != NULL)
		xasprintf(cause, "container %s: memory: %s", g->key,
		    why != NULL ? why : "cannot be allocated");
	free(why);
	return (-1);
}

/*
 * Widen key's zone by types (libmem's Realloc, as a cold start's end
 * does with DRAM): the zone's types and those, nearest first. Containers
 * it moves are refreshed; the change is logged for an undo.
 */
int
policy_mem_widen(struct policy *P, const char *key, unsigned types,
    char **cause)
{
	struct memalloc_log	 log = { NULL, 0, 0 };
	memmask_t		 zone;

	if (P->mem == NULL || (zone = memalloc_zone_of(P->mem, key)) == 0)
		return (0);
	types |= memalloc_zone_types(P->mem, zone);
	if (memalloc_realloc(P->mem, key, 0, types, &log, &zone, cause) != 0)
		return (-1);
	mark_moved(P, &log, key);
	undo_mem(P, &log);
	return (0);
}

void
policy_mem_drop(struct policy *P, const char *key)
{
	struct memalloc_log	log = { NULL, 0, 0 };

	if (P->mem == NULL)
		return;
	if (memalloc_release(P->mem, key, &log) == 0)
		undo_mem(P, &log);
	memalloc_log_clear(&log);
}

int
policy_mem_zone(const struct policy *P, const char *key, struct cpuset *out)
{
	memmask_t	m;

	if (P->mem == NULL || (m = memalloc_zone_of(P->mem, key)) == 0)
		return (0);
	policy_mem_nodes(P, m, out);
	return (1);
}

long long
policy_mem_size(const struct policy *P, const char *key)
{
	if (P->mem == NULL || memalloc_zone_of(P->mem, key) == 0)
		return (-1);
	return (memalloc_size_of(P->mem, key));
}
