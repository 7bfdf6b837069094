/*
 * policy.c owns the policy state machine: building a policy for a topology
 * and configuration, container grants (create, update, remove, sync),
 * choosing a pool by score (anchor §2.3), the pinning each grant yields
 * (§2.5), the updates of other containers after every change (§4, R-POOL-4)
 * and reconfiguration (§5.3, R-CONF-3). Claims live in claim.c and the
 * saved document in state.c.
 *
 * Transactions: simple operations check everything before they change
 * anything, or undo exactly what they did; operations that touch every
 * grant (sync, reconfigure, restore) build a new policy beside the old one
 * and swap the two only when all of it succeeded.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "explain.h"
#include "memzone.h"
#include "policy_priv.h"
#include "view.h"
#include "xmalloc.h"

void
pinning_init(struct pinning *p)
{
	memset(p, 0, sizeof *p);
	cpuset_init(&p->cpus);
	cpuset_init(&p->mems);
}

void
pinning_clear(struct pinning *p)
{
	free(p->id);
	cpuset_clear(&p->cpus);
	cpuset_clear(&p->mems);
	pinning_init(p);
}

void
pinning_copy(struct pinning *dst, const struct pinning *src)
{
	free(dst->id);
	dst->id = src->id != NULL ? xstrdup(src->id) : NULL;
	dst->pin_cpus = src->pin_cpus;
	dst->pin_mems = src->pin_mems;
	dst->shares = src->shares;
	cpuset_copy(&dst->cpus, &src->cpus);
	cpuset_copy(&dst->mems, &src->mems);
}

int
pinning_equal(const struct pinning *a, const struct pinning *b)
{
	return (a->pin_cpus == b->pin_cpus && a->pin_mems == b->pin_mems &&
	    a->shares == b->shares && cpuset_equal(&a->cpus, &b->cpus) &&
	    cpuset_equal(&a->mems, &b->mems));
}

void
policy_effects_init(struct policy_effects *fx)
{
	memset(fx, 0, sizeof *fx);
	pinning_init(&fx->self);
	cpuset_init(&fx->claim_cpus);
}

void
policy_effects_clear(struct policy_effects *fx)
{
	int	i;

	pinning_clear(&fx->self);
	free(fx->self_pool);
	free(fx->updates);
	strpool_clear(&fx->ids);
	for (i = 0; i < fx->npools; i++)
		free(fx->pools[i]);
	free(fx->pools);
	cpuset_clear(&fx->claim_cpus);
	for (i = 0; i < fx->nedits; i++)
		free(fx->edits[i]);
	free(fx->edits);
	for (i = 0; i < fx->nwarnings; i++)
		free(fx->warnings[i]);
	free(fx->warnings);
	for (i = 0; i < fx->nrefused; i++)
		free(fx->refused[i]);
	free(fx->refused);
	for (i = 0; i < fx->nverify; i++)
		free(fx->verify[i]);
	free(fx->verify);
	free(fx->read);
	undolog_free(fx->undo);
	policy_effects_init(fx);
}

void
policy_warn(struct policy_effects *fx, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (fx == NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = xstrdup("(warning lost: out of memory)");
	va_end(ap);
	fx->warnings = xreallocarray(fx->warnings, fx->nwarnings + 1,
	    sizeof *fx->warnings);
	fx->warnings[fx->nwarnings++] = msg;
}

struct grant *
grant_new(const char *key, enum grant_kind kind)
{
	struct grant	*g;

	g = xcalloc(1, sizeof *g);
	g->key = xstrdup(key);
	g->kind = kind;
	cpuset_init(&g->exclusive);
	pinning_init(&g->applied);
	return (g);
}

static char **
strv_dup(char **v, int n)
{
	char	**out;
	int	  i;

	if (v == NULL)
		return (NULL);
	out = xcalloc((size_t)n + 1, sizeof *out);
	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return (out);
}

/* A copy of g to change while g is kept for an undo. */
struct grant *
grant_dup(const struct grant *g)
{
	struct grant	*d;

	d = grant_new(g->key, g->kind);
	d->pool = g->pool;
	d->type = g->type;
	cpuset_copy(&d->exclusive, &g->exclusive);
	d->portion = g->portion;
	d->zero_req = g->zero_req;
	d->req = g->req;
	if (g->spec.id != NULL)
		cspec_dup(&d->spec, &g->spec);
	d->nclaims = g->nclaims;
	d->claims = strv_dup(g->claims, g->nclaims);
	d->claim_ns = g->claim_ns ? xstrdup(g->claim_ns) : NULL;
	d->claim_name = g->claim_name ? xstrdup(g->claim_name) : NULL;
	d->consumers_known = g->consumers_known;
	d->nconsumers = g->nconsumers;
	d->consumers = strv_dup(g->consumers, g->nconsumers);
	d->nresults = g->nresults;
	if (g->waiting != NULL) {
		d->waiting = xcalloc(POLICY_MAX_WAITING, sizeof *d->waiting);
		for (d->nwaiting = 0; d->nwaiting < g->nwaiting; d->nwaiting++)
			d->waiting[d->nwaiting] = xstrdup(
			    g->waiting[d->nwaiting]);
	}
	pinning_copy(&d->applied, &g->applied);
	d->fallback = g->fallback;
	d->dirty = g->dirty;
	d->applied_gen = g->applied_gen;
	d->cold_until = g->cold_until;
	d->cold_done = g->cold_done;
	d->why = explain_ref(g->why);
	d->picked_by = g->picked_by;
	return (d);
}

void
grant_free(struct grant *g)
{
	int	i;

	if (g == NULL)
		return;
	free(g->key);
	cpuset_clear(&g->exclusive);
	cspec_clear(&g->spec);
	for (i = 0; i < g->nclaims; i++)
		free(g->claims[i]);
	free(g->claims);
	claim_set_meta(g, NULL);
	for (i = 0; i < g->nwaiting; i++)
		free(g->waiting[i]);
	free(g->waiting);
	pinning_clear(&g->applied);
	explain_unref(g->why);
	free(g);
}

static void
grant_free_value(void *g)
{
	grant_free(g);
}

void
grant_free_all(struct strmap *m)
{
	strmap_free_all(m, grant_free_value);
}

static int
grant_cmp(const void *a, const void *b)
{
	const struct grant	*x = *(const struct grant *const *)a;
	const struct grant	*y = *(const struct grant *const *)b;

	return (strcmp(x->key, y->key));
}

/* Every grant of a map sorted by key (caller frees the array). */
struct grant **
policy_sorted(const struct strmap *m, size_t *n)
{
	struct grant	**v = (struct grant **)strmap_values(m, n);

	qsort(v, *n, sizeof *v, grant_cmp);
	return (v);
}

static void	mem_offers_init(struct policy *);
static void	mem_offers_free(struct policy *);

int
policy_build(const struct topology *t, const struct config *cfg,
    struct policy **out, char **cause)
{
	struct policy	*P;
	int		 rc;

	*out = NULL;
	P = xcalloc(1, sizeof *P);
	P->topo = t;
	P->alloc = cpualloc_new(t);
	P->cfg = config_dup(cfg);
	cpuset_init(&P->allowed);
	cpuset_init(&P->reserved);
	if ((rc = config_resolve_cpus(cfg, t, &P->allowed, &P->reserved,
	    cause)) != 0 ||
	    (rc = pool_tree_new(t, &P->allowed, &P->reserved, &P->tree,
	    cause)) != 0) {
		policy_free(P);
		return (rc);
	}
	supply_init_all(P);
	mem_offers_init(P);
	policy_mem_init(P);
	/* Keyed by their grants' keys (policy_put). */
	P->ctrs = strmap_new_borrowing();
	P->claims = strmap_new_borrowing();
	index_init(P);
	P->ndevs = dradev_list(P->tree, &P->devs);
	*out = P;
	return (0);
}

int
policy_new(const struct topology *t, const struct config *cfg,
    struct policy **out, char **cause)
{
	return (policy_build(t, cfg, out, cause));
}

void
policy_free(struct policy *P)
{
	if (P == NULL)
		return;
	index_clear(P);
	grant_free_all(P->ctrs);
	grant_free_all(P->claims);
	supply_clear_all(P);
	mem_offers_free(P);
	policy_mem_free(P);
	cpualloc_free(P->alloc);
	pool_tree_free(P->tree);
	config_free(P->cfg);
	cpuset_clear(&P->allowed);
	cpuset_clear(&P->reserved);
	dradev_free_list(P->devs, P->ndevs);
	free(P);
}

void
policy_swap(struct policy *a, struct policy *b)
{
	struct policy	tmp = *a;

	*a = *b;
	*b = tmp;
}

/* Scoring (anchor §2.3). */

struct scoring {
	const struct policy	*P;
	const struct request	*r;
	const struct cspec	*spec;
	struct score		*scores;	/* by pool id: stack, or heap */
	int			 target;	/* unlimited burstable level */
	const struct affinity_set *affs;	/* explicit affinities */
	const double		*extra;		/* affinity by pool (tests) */
	struct score		 stack[POOLS_ON_STACK];
};

static int
pool_level(const struct pool *p)
{
	switch (p->kind) {
	case POOL_VIRTUAL:
		return (UB_SYSTEM);
	case POOL_SOCKET:
		return (UB_PACKAGE);
	case POOL_DIE:
		return (UB_DIE);
	case POOL_NUMA:
		return (UB_NUMA);
	case POOL_L3:
		return (UB_L3CACHE);
	}
	return (UB_SYSTEM);
}

/*
 * The level of unlimited burstable containers: the container's
 * unlimited-burstable annotation (by scope), else the config's; a level
 * deeper than the tree knows (l2cache, core, thread) counts as its
 * deepest; one that is none of these is the config's, as in Go.
 */
static int
burstable_want(const struct policy *P, const struct cspec *c)
{
	static const char *const names[] = { "system", "package", "die",
	    "numa", "l3cache", "l2cache", "core", "thread" };
	const char	*v = request_annotation(c, "unlimited-burstable");
	int		 i;

	for (i = 0; v != NULL && i < (int)(sizeof names / sizeof names[0]);
	    i++)
		if (strcmp(v, names[i]) == 0)
			return (i > UB_L3CACHE ? UB_L3CACHE : i);
	return (P->cfg->unlimited_burstable);
}

/* That level snapped to a level the tree has: the nearest shallower one,
 * else the nearest deeper (findExistingTopologyLevel). */
static int
burstable_level(const struct policy *P, const struct cspec *c)
{
	int	have[UB_L3CACHE + 1] = { 0 }, want, i;

	for (i = 0; i < pool_tree_count(P->tree); i++)
		have[pool_level(pool_tree_get(P->tree, i))] = 1;
	want = burstable_want(P, c);
	for (i = want; i >= UB_SYSTEM; i--)
		if (have[i])
			return (i);
	for (i = want; i <= UB_L3CACHE; i++)
		if (have[i])
			return (i);
	return (want);
}

/*
 * The memory a pool would offer (getMemOffer, memzone.c): the offer
 * matches when it holds every wanted type; the pool itself may lack some
 * (HasMemoryType).
 */
static void
mem_offer_make(const struct topology *t, const struct pool *p,
    unsigned types, struct mem_offer *o)
{
	cpuset_init(&o->zone);
	memzone_offer(t, p, types, &o->zone);
	o->mems = cpuset_count(&o->zone);
	o->match = types != 0 && memzone_types(t, &o->zone) == types;
	o->own = types != 0 && (memzone_types(t, &p->mems) & types) == types;
	o->made = 1;
}

/* Room for every pool's offer for every set of types, and the types this
 * machine has: scoring asks each pool's for every container placed, and
 * pinning and the exports for every one moved. */
static void
mem_offers_init(struct policy *P)
{
	const struct topo_node	*n;
	int			 i;

	P->offers = xcalloc((size_t)pool_tree_count(P->tree) * MEM_TYPE_SETS,
	    sizeof *P->offers);
	for (i = 0; i < topology_nnodes(P->topo); i++) {
		n = topology_node(P->topo, i);
		if (n->memory > 0)
			P->mem_have |= 1u << n->type;
	}
	/* Go's default: every type but HBM, of those the machine has. */
	P->mem_default = P->mem_have & ~(1u << MEM_TYPE_HBM);
}

static void
mem_offers_free(struct policy *P)
{
	size_t	i, n;

	if (P->offers == NULL)
		return;
	n = (size_t)pool_tree_count(P->tree) * MEM_TYPE_SETS;
	for (i = 0; i < n; i++)
		cpuset_clear(&P->offers[i].zone);
	free(P->offers);
	P->offers = NULL;
}

const struct mem_offer *
policy_mem_offer(const struct policy *P, const struct pool *p,
    unsigned types)
{
	struct mem_offer	*o;

	/* A cache of what the tree fixes, filled through const P. */
	types &= MEM_TYPE_SETS - 1;
	o = (struct mem_offer *)&P->offers[(unsigned)p->id * MEM_TYPE_SETS +
	    types];
	if (!o->made)
		mem_offer_make(P->topo, p, types, o);
	return (o);
}

unsigned
policy_mem_types(const struct policy *P, const struct grant *g)
{
	return (g->req.mem_preserve ? P->mem_default : g->req.mem_types);
}

/* What a container's memory takes: its request, else its limit. */
static long long
mem_amount(const struct request *r)
{
	return (r->mem_req > 0 ? r->mem_req : r->mem_lim);
}

/*
 * With memory accounted, the offer is the allocator's for the container's
 * request (getMemOffer): it fails when the memory cannot be had, and may
 * be wider than the unaccounted one when the pool's nodes are short.
 */
static void
mem_offer(const struct policy *P, const struct pool *p,
    const struct scoring *sc, struct score *s)
{
	const struct request	*r = sc->r;
	const struct mem_offer	*o = policy_mem_offer(P, p, r->mem_types);
	memmask_t		 zone;

	s->mems = o->mems;
	s->mem_match = o->match;
	s->mem_own = o->own;
	if (P->mem == NULL)
		return;
	/* Nothing to place overcommits nothing: the allocator would give
	 * the starting zone, which is the unaccounted offer. */
	if (mem_amount(r) == 0)
		return;
	s->mem_cap = memalloc_zone_capacity(P->mem, policy_mem_pool(P, p, r));
	if (policy_mem_score(P, p, sc->spec->id, r, sc->spec, &zone) != 0) {
		s->mems = 0;
		s->mem_match = 0;
		return;
	}
	s->mems = __builtin_popcountll(zone);
	s->mem_match = r->mem_types != 0 &&
	    memalloc_zone_types(P->mem, zone) == r->mem_types;
}

static void
score_pools(struct scoring *sc)
{
	const struct policy	*P = sc->P;
	const struct request	*r = sc->r;
	const struct pool	*p, *a, *q;
	const struct grant	*g;
	const int		*pods, *nss;
	const struct cpuset	*hpset, *lpset;
	double			*aff, w, sum;
	int			 id, full, part, k, np, lp, hp, explicit;
	int			*room, anyaff, hpnone, lpnone, allnormal;
	double			 affbuf[POOLS_ON_STACK];
	int			 roombuf[2 * POOLS_ON_STACK];

	np = pool_tree_count(P->tree);
	aff = xscratch(affbuf, sizeof affbuf, (size_t)np, sizeof *aff);
	/* High and low priority capacity: P-cores and E-cores where the
	 * machine has both kinds, else the CPU priorities (GetScore). */
	hpset = topology_kind_cpus(P->topo, CORE_KIND_PERF);
	lpset = topology_kind_cpus(P->topo, CORE_KIND_EFFICIENT);
	if (cpuset_empty(hpset))
		hpset = topology_prio_cpus(P->topo, CPU_PRIO_HIGH);
	if (cpuset_empty(lpset))
		lpset = topology_prio_cpus(P->topo, CPU_PRIO_LOW);
	/* Most machines have one kind of CPU and no priorities: no
	 * intersections to count, and every pool CPU (online) is normal. */
	hpnone = cpuset_empty(hpset);
	lpnone = cpuset_empty(lpset);
	allnormal = cpuset_empty(topology_prio_cpus(P->topo, CPU_PRIO_HIGH)) &&
	    cpuset_empty(topology_prio_cpus(P->topo, CPU_PRIO_LOW));
	full = r->full;
	part = r->fraction;
	if (full == 0 && part == 0)
		part = 1;

	/*
	 * Colocation counts and affinities from the other grants, counted
	 * by the index; the container's own grant, when it has one (an
	 * update, a create again), is not another. As in Go, the implicit
	 * affinities (colocatePods, colocateNamespaces) apply only to a
	 * container without explicit ones.
	 */
	explicit = sc->affs != NULL && sc->affs->n > 0;
	pods = P->cfg->colocate_pods && !explicit ?
	    index_pod(P, sc->spec->pod) : NULL;
	nss = P->cfg->colocate_namespaces && !explicit ?
	    index_ns(P, sc->spec->ns) : NULL;
	for (id = 0; id < np; id++) {
		sc->scores[id].colocated = index_ntype(P, id, r->type);
		aff[id] = 10.0 * ((pods ? pods[id] : 0) + (nss ? nss[id] : 0));
	}
	if (explicit)
		affinity_weigh(P, sc->spec, sc->affs, aff);
	for (id = 0; sc->extra != NULL && id < np; id++)
		aff[id] += sc->extra[id];
	if ((g = strmap_get(P->ctrs, sc->spec->id)) != NULL && g->pool != NULL) {
		id = g->pool->id;
		if (g->type == r->type)
			sc->scores[id].colocated--;
		if (pods != NULL && g->spec.pod != NULL &&
		    strcmp(g->spec.pod, sc->spec->pod) == 0)
			aff[id] -= 10;
		if (nss != NULL && g->spec.ns != NULL &&
		    strcmp(g->spec.ns, sc->spec->ns) == 0)
			aff[id] -= 10;
	}

	/* Most containers have no affinity anywhere: no sums to make. */
	for (id = 0, anyaff = 0; id < np && !anyaff; id++)
		anyaff = aff[id] != 0;

	room = xscratch(roombuf, sizeof roombuf, 2 * (size_t)np, sizeof *room);
	supply_allocatable_every(P, room, room + np);
	for (id = 0; id < np; id++) {
		struct score	*s = &sc->scores[id];
		const struct supply *sup = &P->sup[id];

		p = pool_tree_get(P->tree, id);
		s->reserved = room[np + id];
		s->shared = s->burst = room[id];
		mem_offer(P, p, sc, s);
		if (r->type == CPU_RESERVED)
			s->reserved -= part;
		else {
			if (r->isolate)
				s->isolated = cpuset_count(&sup->isolated) - full;
			if (!r->isolate || s->isolated < 0)
				s->shared -= 1000 * full;
			s->shared -= part;
			hp = hpnone ? 0 : cpuset_and_count(hpset,
			    &sup->sharable);
			lp = lpnone ? 0 : cpuset_and_count(lpset,
			    &sup->sharable);
			k = allnormal ? cpuset_count(&sup->sharable) :
			    cpuset_and_count(topology_prio_cpus(P->topo,
			    CPU_PRIO_NORMAL), &sup->sharable);
			s->prio[CPU_PRIO_HIGH] = 1000 * hp - (1000 * full + part);
			s->prio[CPU_PRIO_LOW] = 1000 * lp - (1000 * full + part);
			s->prio[CPU_PRIO_NORMAL] = 1000 * k - (1000 * full + part);
		}
		/* Affinity diluted by 0.75 per edge, up the tree and down. */
		sum = 0;
		if (!anyaff) {
			s->affinity = sum;
			continue;
		}
		w = 0.75;
		for (a = p->parent; a != NULL; a = a->parent, w *= 0.75)
			sum += w * aff[a->id];
		for (k = 0; k <= id; k++) {
			q = pool_tree_get(P->tree, k);
			if (q != p && !pool_is_ancestor(p, q))
				continue;
			for (w = 1, lp = q->depth; lp > p->depth; lp--)
				w *= 0.75;
			sum += w * aff[k];
		}
		s->affinity = sum;
	}
	xscratch_free(room, roombuf);
	xscratch_free(aff, affbuf);
}

#define P_MEM(sc)	((sc)->P->mem != NULL)

/*
 * < 0 when pool x is the better choice, > 0 when y is (compareScores);
 * *rule names the rule that decided.
 */
#define DECIDE(name, v)	do { *rule = (name); return (v); } while (0)

static int
score_cmp(const struct scoring *sc, const struct pool *x, const struct pool *y,
    const char **rule)
{
	const struct request	*r = sc->r;
	const struct score	*s1 = &sc->scores[x->id], *s2 = &sc->scores[y->id];
	int			 l1, l2, b1, b2;

	if (r->type == CPU_NORMAL) {
		if ((s2->isolated < 0 && s1->isolated >= 0) ||
		    (s2->shared < 0 && s1->shared >= 0))
			DECIDE("capacity", -1);
		if ((s1->isolated < 0 && s2->isolated >= 0) ||
		    (s1->shared < 0 && s2->shared >= 0))
			DECIDE("capacity", 1);
	} else if (r->type == CPU_RESERVED) {
		if (s2->reserved < 0 && s1->reserved >= 0)
			DECIDE("capacity", -1);
		if (s1->reserved < 0 && s2->reserved >= 0)
			DECIDE("capacity", 1);
	}
	if (s1->affinity != s2->affinity)
		DECIDE("affinity", s1->affinity > s2->affinity ? -1 : 1);

	/* A failed memory offer (no node) loses; then an offer of the
	 * wanted memory types beats one that lacks some. */
	if ((s1->mems > 0) != (s2->mems > 0))
		DECIDE("memory offer", s1->mems > 0 ? -1 : 1);
	if (s1->mem_match != s2->mem_match)
		DECIDE("memory types offered", s1->mem_match ? -1 : 1);
	/* A request below its limit: the pool whose nodes hold the limit
	 * (or, unlimited, more memory) wins. */
	if (P_MEM(sc) && s1->mems > 0 && s2->mems > 0 &&
	    mem_amount(r) != r->mem_lim) {
		if (r->mem_lim != 0 ? (s1->mem_cap >= r->mem_lim) !=
		    (s2->mem_cap >= r->mem_lim) : s1->mem_cap != s2->mem_cap)
			DECIDE("memory burstability", (r->mem_lim != 0 ?
			    s1->mem_cap >= r->mem_lim :
			    s1->mem_cap > s2->mem_cap) ? -1 : 1);
	}

	if (sc->spec->qos == QOS_BURSTABLE) {
		b1 = s1->burst;
		b2 = s2->burst;
		if (r->limit != UNLIMITED_CPU) {
			if (b1 - r->limit >= 0 && b2 - r->limit < 0)
				DECIDE("CPU burstability", -1);
			if (b2 - r->limit >= 0 && b1 - r->limit < 0)
				DECIDE("CPU burstability", 1);
		} else {
			l1 = pool_level(x);
			l2 = pool_level(y);
			if (l1 == sc->target && l2 != sc->target)
				DECIDE("burstable level", -1);
			if (l2 == sc->target && l1 != sc->target)
				DECIDE("burstable level", 1);
			if (l1 == sc->target && l2 == sc->target) {
				if (b1 != b2)
					DECIDE("burstable level",
					    b1 > b2 ? -1 : 1);
				DECIDE("burstable level, pool id",
				    x->id - y->id);
			}
			if (l1 > sc->target && l2 < sc->target)
				DECIDE("burstable level", -1);
			if (l2 > sc->target && l1 < sc->target)
				DECIDE("burstable level", 1);
			DECIDE("burstable level, pool id",
				    x->id - y->id);
		}
	}
	/* The tighter offer wins (an empty one is a failed offer). */
	if (s1->mems != s2->mems && s1->mems > 0 && s2->mems > 0)
		DECIDE("tighter memory offer", s1->mems < s2->mems ? -1 : 1);

	/* A pool that has every wanted type itself wins. */
	if (s1->mem_own != s2->mem_own)
		DECIDE("memory types held", s1->mem_own ? -1 : 1);

	if (r->prio == CPU_PRIO_LOW || r->prio == CPU_PRIO_HIGH) {
		b1 = s1->prio[r->prio];
		b2 = s2->prio[r->prio];
		if (b1 >= 0 && b2 < 0)
			DECIDE("CPU priority", -1);
		if (b1 < 0 && b2 >= 0)
			DECIDE("CPU priority", 1);
	}
	if (x->depth != y->depth)
		DECIDE("depth", x->depth > y->depth ? -1 : 1);

	if (r->type == CPU_RESERVED) {
		b1 = s1->reserved / (s1->colocated + 1);
		b2 = s2->reserved / (s2->colocated + 1);
		if (b1 != b2)
			DECIDE("reserved capacity per container",
			    b1 > b2 ? -1 : 1);
	} else if (r->type == CPU_NORMAL) {
		if (r->isolate && (s1->isolated > 0 || s2->isolated > 0)) {
			if (s1->isolated != s2->isolated)
				DECIDE("isolated capacity",
				    s1->isolated > s2->isolated ? -1 : 1);
			DECIDE("isolated capacity, pool id",
			    x->id - y->id);
		}
		if (r->prio == CPU_PRIO_NORMAL) {
			b1 = s1->prio[CPU_PRIO_NORMAL];
			b2 = s2->prio[CPU_PRIO_NORMAL];
			if (b1 >= 0 && b2 < 0)
				DECIDE("normal-priority capacity", -1);
			if (b1 < 0 && b2 >= 0)
				DECIDE("normal-priority capacity", 1);
		}
		if (r->full > 0 && (s1->shared > 0 || s2->shared > 0)) {
			if (s1->shared != s2->shared)
				DECIDE("sliceable capacity",
				    s1->shared > s2->shared ? -1 : 1);
			DECIDE("sliceable capacity, pool id",
			    x->id - y->id);
		}
		if (s1->colocated != s2->colocated)
			DECIDE("colocated containers",
			    s1->colocated < s2->colocated ? -1 : 1);
		if (s1->shared != s2->shared)
			DECIDE("shared capacity",
			    s1->shared > s2->shared ? -1 : 1);
	}
	DECIDE("pool id", x->id - y->id);
}

/*
 * An exclusive request placed above the NUMA nodes: one warning naming,
 * for each node, the rule by which the chosen pool beat it.
 */
static void
warn_climb(const struct scoring *sc, const struct grant *g,
    const struct pool *best, struct policy_effects *fx)
{
	const struct policy	*P = sc->P;
	const struct pool	*n;
	const char		*rule;
	char			*msg, *tmp;
	int			 i, nnuma = 0;

	if (sc->r->full == 0 || best->kind == POOL_NUMA ||
	    best->kind == POOL_L3 || fx == NULL)
		return;
	xasprintf(&msg, "container %s: %d exclusive CPU%s from %s, not from "
	    "a NUMA node:", g->key, sc->r->full, sc->r->full > 1 ? "s" : "",
	    best->name);
	for (i = 0; i < pool_tree_count(P->tree); i++) {
		n = pool_tree_get(P->tree, i);
		if (n->kind != POOL_NUMA)
			continue;
		(void)score_cmp(sc, best, n, &rule);
		if (strcmp(rule, "capacity") == 0)
			xasprintf(&tmp, "%s%s %s: %dm sliceable, %dm asked",
			    msg, nnuma ? ";" : "", n->name,
			    supply_allocatable_shared(P, n),
			    1000 * sc->r->full + sc->r->fraction);
		else
			xasprintf(&tmp, "%s%s %s: lost on %s", msg,
			    nnuma ? ";" : "", n->name, rule);
		free(msg);
		msg = tmp;
		nnuma++;
	}
	if (nnuma > 0)
		policy_warn(fx, "%s", msg);
	free(msg);
}

/* The best pool by score for g's request r; scoring_done(sc) after. */
static struct pool *
best_pool(const struct policy *P, const struct grant *g,
    const struct request *r, const struct affinity_set *affs,
    const double *extra, struct scoring *sc)
{
	struct pool	*best = NULL, *p;
	const char	*rule;
	int		 i;

	/* Field by field: the stack's scores are zeroed only as many as
	 * the tree has pools. */
	sc->P = P;
	sc->r = r;
	sc->spec = &g->spec;
	sc->target = burstable_level(P, &g->spec);
	sc->affs = affs;
	sc->extra = extra;
	sc->scores = xscratch(sc->stack, sizeof sc->stack,
	    (size_t)pool_tree_count(P->tree), sizeof *sc->scores);
	score_pools(sc);
	for (i = 0; i < pool_tree_count(P->tree); i++) {
		p = pool_tree_get(P->tree, i);
		if (best == NULL || score_cmp(sc, p, best, &rule) < 0)
			best = p;
	}
	return (best);
}

static void
scoring_done(struct scoring *sc)
{
	xscratch_free(sc->scores, sc->stack);
	sc->scores = NULL;
}

/*
 * The pool a container of s would get by score, with extra affinity by
 * pool id added to its own: Go's tests give affinities so. Nothing is
 * allocated. Returns the pool's name, or NULL with *cause.
 */
const char *
policy_pick_pool(struct policy *P, const struct container_spec *s,
    const double *extra, char **cause)
{
	struct scoring		 sc;
	struct affinity_set	 affs = { 0, NULL };
	struct grant		*g;
	const struct pool	*best = NULL;

	if (cspec_check(s, cause) != 0)
		return (NULL);
	g = grant_new(s->id, GRANT_CONTAINER);
	(void)cspec_copy(&g->spec, s);
	if (request_from_spec(P, &g->spec, &g->req, cause) == 0 &&
	    affinity_of(&g->spec, &affs, cause) == 0) {
		best = best_pool(P, g, &g->req, &affs, extra, &sc);
		scoring_done(&sc);
	}
	affinity_set_clear(&affs);
	grant_free(g);
	return (best != NULL ? best->name : NULL);
}

/*
 * CPUs of pool p and then the memory of g (memgrant.c), or neither with
 * *cause: the memory may be short where the CPUs are not.
 */
static int
allocate_in(struct policy *P, struct pool *p, const struct request *r,
    struct grant *g, char **cause)
{
	struct undoctx	u;
	int		rc;

	undo_begin(P, NULL, &u);
	if ((rc = supply_allocate(P, p, r, g, cause)) == 0 &&
	    (rc = policy_mem_take(P, g, NULL, 0, cause)) != 0)
		undo_fail(P, &u);
	undo_end(P, &u);
	return (rc);
}

/* g was placed as e says. */
void
grant_explained(struct grant *g, struct explain *e)
{
	explain_unref(g->why);
	g->why = e;
}

/* A placement by score, kept for explain: the rule each pool lost by. */
static struct explain *
scored(const struct scoring *sc, const struct pool *best)
{
	struct explain	*e;
	const char	**why, *whybuf[POOLS_ON_STACK];
	int		  i, np = pool_tree_count(sc->P->tree);

	why = xscratch(whybuf, sizeof whybuf, (size_t)np, sizeof *why);
	for (i = 0; i < np; i++)
		if (i != best->id)
			(void)score_cmp(sc, best, pool_tree_get(sc->P->tree, i),
			    &why[i]);
	e = explain_scored(sc->P->tree, best->id, sc->target, sc->scores, why);
	xscratch_free(why, whybuf);
	return (e);
}

/*
 * Allocate a container grant: reserved requests from the root, the others
 * from the best pool by score, or the hinted pool (its old one on update)
 * when that one can still take it. affs are its affinities as the caller
 * read them, or NULL to read them from its spec here.
 */
int
policy_allocate_container(struct policy *P, struct grant *g,
    const char *hint, const struct affinity_set *affs,
    struct policy_effects *fx, char **cause)
{
	struct scoring		 sc;
	struct affinity_set	 own = { 0, NULL };
	struct request		 r = g->req;
	struct pool		*best = NULL, *p;
	char			*why = NULL;
	int			 rc;

	if (r.type == CPU_RESERVED &&
	    cpuset_empty(&pool_tree_root(P->tree)->reserved))
		r.type = CPU_NORMAL;
	if (r.type != CPU_NORMAL) {
		p = pool_tree_root(P->tree);
		if ((rc = allocate_in(P, p, &r, g, cause)) == 0)
			grant_explained(g, explain_other(EXPLAIN_ROOT, p->name,
			    NULL));
		return (rc);
	}

	if (hint != NULL && (p = pool_tree_find(P->tree, hint)) != NULL) {
		if (allocate_in(P, p, &r, g, &why) == 0) {
			grant_explained(g, explain_other(EXPLAIN_KEPT, p->name,
			    NULL));
			return (0);
		}
		free(why);
		why = NULL;
	}
	if (affs == NULL) {
		if ((rc = affinity_of(&g->spec, &own, cause)) != 0)
			return (rc);
		affs = &own;
	}
	best = best_pool(P, g, &r, affs, NULL, &sc);
	rc = allocate_in(P, best, &r, g, &why);
	if (rc != 0) {
		xasprintf(cause, "container %s: %s", g->key, why);
		free(why);
	} else {
		grant_explained(g, scored(&sc, best));
		warn_climb(&sc, g, best, fx);
	}
	scoring_done(&sc);
	affinity_set_clear(&own);
	return (rc);
}

/* Keep the lowest thread of every core in the set. */
static void
hide_hyperthreads(const struct topology *t, struct cpuset *s)
{
	const struct topo_cpu	*c;
	const struct topo_core	*core;
	struct cpuset		 out = CPUSET_INITIALIZER;
	int			 id, th, first;

	CPUSET_FOREACH(id, s) {
		if ((c = topology_cpu(t, id)) == NULL ||
		    (core = topology_core(t, c->core)) == NULL) {
			cpuset_add(&out, id);
			continue;
		}
		/* A thread stays when no lower thread of its core is in s. */
		first = 1;
		CPUSET_FOREACH(th, &core->threads) {
			if (th >= id)
				break;
			if (cpuset_has(s, th))
				first = 0;
		}
		if (first)
			cpuset_add(&out, id);
	}
	cpuset_move(s, &out);
}

static int
milli_to_shares(long long milli)
{
	long long	shares = milli * 1024 / 1000;

	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	return ((int)shares);
}

/* The DRAM nodes that hold the given CPUs and have memory. */
static void
mems_of_cpus(const struct topology *t, const struct cpuset *cpus,
    struct cpuset *mems)
{
	const struct topo_node	*n;
	int			 i;

	cpuset_zero(mems);
	for (i = 0; i < topology_nnodes(t); i++) {
		n = topology_node(t, i);
		if (n->memory > 0 && n->type == MEM_TYPE_DRAM &&
		    cpuset_intersects(&n->cpus, cpus))
			cpuset_add(mems, n->id);
	}
}

static void	export_mems(const struct policy *, const struct pool *,
		    unsigned, struct cpuset *);

/* The deepest pool holding a DRAM node: the node's own pool. */
static const struct pool *
node_pool(const struct policy *P, int node)
{
	const struct pool	*p, *best = NULL;
	int			 i;

	for (i = 0; i < pool_tree_count(P->tree); i++) {
		p = pool_tree_get(P->tree, i);
		if (cpuset_has(&p->mems_type[MEM_TYPE_DRAM], node) &&
		    (best == NULL || p->depth > best->depth))
			best = p;
	}
	return (best);
}

/*
 * A claim-pinned container's memory: for each DRAM node of its claim's
 * CPUs, what that node's pool offers the container's memory types, as for
 * any container of that pool.
 */
void
policy_claim_mems(const struct policy *P, const struct grant *g,
    struct cpuset *mems)
{
	struct cpuset		 dram = CPUSET_INITIALIZER;
	struct cpuset		 zone = CPUSET_INITIALIZER;
	const struct pool	*p;
	int			 n;

	mems_of_cpus(P->topo, &g->exclusive, &dram);
	cpuset_zero(mems);
	CPUSET_FOREACH(n, &dram) {
		if ((p = node_pool(P, n)) == NULL) {
			cpuset_add(mems, n);
			continue;
		}
		export_mems(P, p, policy_mem_types(P, g), &zone);
		cpuset_or(mems, &zone);
	}
	cpuset_clear(&dram);
	cpuset_clear(&zone);
}

/* What a grant pins its container to (anchor §2.5, R-POOL-3, R-CLAIM-9;
 * memory by type as the Go policy pins it). */

void
policy_pin(const struct policy *P, const struct grant *g, struct pinning *pin)
{
	const struct pool	*p = g->pool;
	struct cpuset		 shared = CPUSET_INITIALIZER;
	long long		 milli;

	if (pin->id == NULL || strcmp(pin->id, g->key) != 0) {
		free(pin->id);
		pin->id = xstrdup(g->key);
	}
	cpuset_zero(&pin->cpus);
	cpuset_zero(&pin->mems);
	pin->shares = 0;
	pin->pin_cpus = pin->pin_mems = 0;

	if (g->kind == GRANT_CLAIM_PINNED) {
		/* A claim is a contract: pinned whatever pinCPU says. */
		pin->pin_cpus = 1;
		cpuset_copy(&pin->cpus, &g->exclusive);
		pin->pin_mems = P->cfg->pin_memory;
		if (pin->pin_mems && !policy_mem_zone(P, g->key, &pin->mems))
			policy_claim_mems(P, g, &pin->mems);
		pin->shares = milli_to_shares(1000LL *
		    cpuset_count(&g->exclusive));
		return;
	}
	if (p == NULL)
		return;

	/* Preserved CPUs are left as they are; memory may still be pinned. */
	if (P->cfg->pin_cpu && g->type != CPU_PRESERVE) {
		pin->pin_cpus = 1;
		if (g->type == CPU_RESERVED && !cpuset_empty(&p->reserved))
			cpuset_copy(&pin->cpus, &p->reserved);
		else if (cpuset_empty(&g->exclusive))
			supply_shared_cpus(P, p, &pin->cpus);
		else {
			cpuset_copy(&pin->cpus, &g->exclusive);
			if (g->portion > 0) {
				supply_shared_cpus(P, p, &shared);
				cpuset_or(&pin->cpus, &shared);
			}
		}
		if (g->req.hide_ht)
			hide_hyperthreads(P->topo, &pin->cpus);
		/* The whole request: the Go policy leaves out the exclusive
		 * part of a mixed grant, weighing it below its request. */
		milli = g->portion + 1000LL * cpuset_count(&g->exclusive);
		pin->shares = milli_to_shares(milli);
	}
	if (P->cfg->pin_memory && !g->req.mem_preserve) {
		pin->pin_mems = 1;
		if (!policy_mem_zone(P, g->key, &pin->mems))
			export_mems(P, p, g->req.mem_types, &pin->mems);
	}
	cpuset_clear(&shared);
}

static const struct pool *shared_file_pool(const struct policy *,
    const struct grant *);
static const struct cpuset *default_mems(const struct policy *,
    const struct pool *);

/* shared_file_pool of a grant just pinned, without its zone looked up
 * again: pinned memory is its zone's nodes, or else its pool's default
 * ones, and a zone other than those gives it a file of its own. */
static const struct pool *
shared_file_pool_pinned(const struct policy *P, const struct grant *g)
{
	if (g->kind != GRANT_CONTAINER || g->pool == NULL ||
	    g->type != CPU_NORMAL || !cpuset_empty(&g->exclusive) ||
	    policy_mem_types(P, g) != P->mem_default)
		return (NULL);
	if (g->req.mem_preserve)
		return (g->pool);
	if (g->applied.pin_mems)
		return (cpuset_equal(&g->applied.mems,
		    default_mems(P, g->pool)) ? g->pool : NULL);
	return (shared_file_pool(P, g));
}

/* g moved: an update, and its pool's file when that file is all it has. */
static void
effects_moved(const struct policy *P, const struct grant *g, int supply_only,
    struct cpuset *named, struct policy_effects *fx)
{
	struct policy_update	*u;
	const struct pool	*p;
	int			 i;

	/* Room doubles at 16, 32, ...: only this adds updates. */
	if (fx->nupdates == 0 || (fx->nupdates >= 16 &&
	    (fx->nupdates & (fx->nupdates - 1)) == 0))
		fx->updates = xreallocarray(fx->updates,
		    fx->nupdates ? 2 * (size_t)fx->nupdates : 16,
		    sizeof *fx->updates);
	u = &fx->updates[fx->nupdates++];
	/* A claim moves hundreds: their ids are copied into one pool. */
	u->id = strpool_dup(&fx->ids, g->key);
	/* Neither its pool nor its memory changed (both make it dirty), so
	 * what its file is did not either. */
	u->pool_file = supply_only &&
	    (p = shared_file_pool_pinned(P, g)) != NULL;
	if (!u->pool_file || cpuset_has(named, p->id))
		return;
	(void)cpuset_add(named, p->id);
	for (i = 0; i < fx->npools; i++)
		if (strcmp(fx->pools[i], p->name) == 0)
			return;
	fx->pools = xreallocarray(fx->pools, (size_t)fx->npools + 1,
	    sizeof *fx->pools);
	fx->pools[fx->npools++] = xstrdup(p->name);
}

/*
 * Recompute the pinning of containers and report every one that changed,
 * exactly once. self is the container the operation was about: its pinning
 * goes to fx->self, not to the updates. Unless all is set, grants whose
 * pinning cannot have changed (exclusive only, reserved, claim-pinned) are
 * skipped: that keeps a claim cheap with many containers placed.
 */
void
policy_refresh(struct policy *P, const char *self, int all,
    struct policy_effects *fx)
{
	struct grant	**v, *g;
	struct pinning	 pin;
	struct cpuset	 named = CPUSET_INITIALIZER;	/* pools in fx->pools */
	unsigned long	 gen;
	size_t		 i, n;
	int		 same, supply_only;

	pinning_init(&pin);
	if ((g = self != NULL ? strmap_get(P->ctrs, self) : NULL) != NULL) {
		undo_applied_move(P, g, 1);
		policy_pin(P, g, &g->applied);
		g->applied_gen = g->pool ? supply_path_gen(P, g->pool) : 0;
		g->dirty = 0;
		if (fx != NULL) {
			pinning_copy(&fx->self, &g->applied);
			free(fx->self_pool);
			fx->self_pool = xstrdup(g->pool != NULL ?
			    g->pool->name : "claims");
		}
	}
	/* Only what may have moved, unless everything is asked for. */
	if (all)
		v = (struct grant **)strmap_values(P->ctrs, &n);
	else
		v = index_moved(P, &n);
	for (i = 0; i < n; i++) {
		g = v[i];
		if (self != NULL && strcmp(g->key, self) == 0)
			continue;
		if (!all && !g->dirty && (g->kind == GRANT_CLAIM_PINNED ||
		    g->type != CPU_NORMAL ||
		    (g->portion == 0 && !cpuset_empty(&g->exclusive))))
			continue;
		gen = g->pool ? supply_path_gen(P, g->pool) : 0;
		if (!all && !g->dirty && gen == g->applied_gen)
			continue;
		/* What it had goes to the undo log moved, not copied: a
		 * claim moves the pinning of hundreds of containers. */
		policy_pin(P, g, &pin);
		same = pinning_equal(&pin, &g->applied);
		undo_applied_move(P, g, !same);
		supply_only = !all && !g->dirty;
		g->dirty = 0;
		g->applied_gen = gen;
		if (same)
			continue;
		g->applied = pin;
		pinning_init(&pin);
		if (fx != NULL)
			effects_moved(P, g, supply_only, &named, fx);
	}
	free(v);
	index_clean(P);
	pinning_clear(&pin);
	cpuset_clear(&named);
}

enum claim_env {
	ENV_UNKNOWN,	/* names no claim we hold */
	ENV_MISMATCH,	/* its value is not the claim's CPUs */
	ENV_UNTRUSTED,	/* its pod is not known to consume the claim */
	ENV_PIN
};

static int
was_pinned(const struct grant *prev, const char *uid)
{
	int	i;

	if (prev == NULL || prev->kind != GRANT_CLAIM_PINNED)
		return (0);
	for (i = 0; i < prev->nclaims; i++)
		if (strcmp(prev->claims[i], uid) == 0)
			return (1);
	return (0);
}

/*
 * What env entry i of c says: the one rule for pinning and for asking
 * whether a create must wait for the API. The variable only names the
 * claim; the right to its CPUs comes from the API server (the claim's
 * reservedFor) or from having been pinned to it before (prev).
 */
static enum claim_env
claim_env_of(const struct policy *P, const struct cspec *c, int i,
    const struct grant *prev, const struct grant **claim)
{
	const struct grant	*cg;
	struct cpuset		 want = CPUSET_INITIALIZER;
	const char		*uid;
	int			 same;

	uid = c->env[i].key + strlen(DRA_ENV_PREFIX);
	if ((cg = strmap_get(P->claims, uid)) == NULL)
		return (ENV_UNKNOWN);
	*claim = cg;
	same = cpuset_parse(&want, c->env[i].value, NULL) == 0 &&
	    cpuset_equal(&want, &cg->exclusive);
	cpuset_clear(&want);
	if (!same)
		return (ENV_MISMATCH);
	if (!was_pinned(prev, uid) && !claim_has_consumer(cg, c->pod_uid))
		return (ENV_UNTRUSTED);
	return (ENV_PIN);
}

static void
verify_add(struct policy_effects *fx, const char *uid)
{
	int	i;

	if (fx == NULL)
		return;
	for (i = 0; i < fx->nverify; i++)
		if (strcmp(fx->verify[i], uid) == 0)
			return;
	fx->verify = xreallocarray(fx->verify, fx->nverify + 1,
	    sizeof *fx->verify);
	fx->verify[fx->nverify++] = xstrdup(uid);
}

static void
refused_add(struct policy_effects *fx, const struct grant *g,
    const struct grant *cg)
{
	char	*msg;

	if (fx == NULL)
		return;
	xasprintf(&msg, "container %s of pod %s (UID %s, namespace %s) names "
	    "claim %s, which its pod does not consume%s; not pinned to its "
	    "CPUs", g->key, g->spec.pod ? g->spec.pod : "?",
	    g->spec.pod_uid ? g->spec.pod_uid : "unknown",
	    g->spec.ns ? g->spec.ns : "?", cg->key,
	    cg->consumers_known ? "" : " (its consumers are not known yet)");
	fx->refused = xreallocarray(fx->refused, fx->nrefused + 1,
	    sizeof *fx->refused);
	fx->refused[fx->nrefused++] = msg;
}

/*
 * R-CLAIM-9: a container whose environment names held claims by their
 * DRA_CPUSET_<uid>=<cpuset> runs on exactly those claims' CPUs, when its
 * pod is among the claim's consumers (or it was pinned there before,
 * prev). A pod that is not is refused (fx->refused) and waits on the
 * claim for its consumers to be read again (fx->verify). Variables that
 * match no held claim are ignored with one warning. Returns 1 when the
 * grant became claim-pinned.
 */
int
policy_pin_to_claims(struct policy *P, struct grant *g,
    const struct grant *prev, struct policy_effects *fx)
{
	const struct cspec	*c = &g->spec;
	const struct grant	*cg = NULL;
	const char		*first = NULL;
	int			 i, ignored = 0;

	for (i = 0; i < c->nenv; i++) {
		switch (claim_env_of(P, c, i, prev, &cg)) {
		case ENV_UNKNOWN:
		case ENV_MISMATCH:
			if (ignored++ == 0)
				first = c->env[i].key;
			continue;
		case ENV_UNTRUSTED:
			refused_add(fx, g, cg);
			claim_wait(P, (struct grant *)cg, g->key);
			verify_add(fx, cg->key);
			continue;
		case ENV_PIN:
			break;
		}
		g->claims = xreallocarray(g->claims, g->nclaims + 1,
		    sizeof *g->claims);
		g->claims[g->nclaims++] = xstrdup(cg->key);
		cpuset_or(&g->exclusive, &cg->exclusive);
	}
	if (ignored > 0)
		policy_warn(fx, "container %s: %d %s* variable%s (%s%s) name%s "
		    "no claim we hold, or not its CPUs; ignored", g->key,
		    ignored, DRA_ENV_PREFIX, ignored > 1 ? "s" : "", first,
		    ignored > 1 ? ", ..." : "", ignored > 1 ? "" : "s");
	if (g->nclaims == 0)
		return (0);
	g->kind = GRANT_CLAIM_PINNED;
	g->pool = NULL;
	g->type = CPU_NORMAL;
	g->portion = 0;
	return (1);
}

/* A carried grant that was refused a claim keeps waiting for it, and the
 * claim is read again (after a restart nothing else would). */
static void
rewait(struct policy *N, const struct grant *g, struct policy_effects *fx)
{
	const struct grant	*cg = NULL;
	int			 i;

	for (i = 0; i < g->spec.nenv; i++)
		if (claim_env_of(N, &g->spec, i, NULL, &cg) == ENV_UNTRUSTED) {
			claim_wait(N, (struct grant *)cg, g->key);
			verify_add(fx, cg->key);
		}
}

int
policy_claims_unverified(const struct policy *P,
    const struct container_spec *s, char ***out)
{
	const struct grant	*cg = NULL;
	struct cspec		 c;
	char			*why = NULL;
	int			 i, n = 0;

	*out = NULL;
	/* Every create asks: most name no claim, and cost no copy. */
	for (i = 0; i < s->nenv; i++)
		if (s->env != NULL && s->env[i].key != NULL &&
		    strncmp(s->env[i].key, DRA_ENV_PREFIX,
		    strlen(DRA_ENV_PREFIX)) == 0)
			break;
	if (i == s->nenv || cspec_check(s, &why) != 0) {
		free(why);
		return (0);
	}
	cspec_copy(&c, s);
	for (i = 0; i < c.nenv; i++) {
		if (claim_env_of(P, &c, i, NULL, &cg) != ENV_UNTRUSTED)
			continue;
		*out = xreallocarray(*out, n + 1, sizeof **out);
		(*out)[n++] = xstrdup(cg->key);
	}
	cspec_clear(&c);
	return (n);
}

/*
 * A container the runtime already runs but that we cannot give what it
 * asks for shares the root pool's CPUs like a BestEffort one, rather than
 * staying untracked. Nothing is checked: it takes no capacity.
 */
void
grant_fallback(struct policy *P, struct grant *g)
{
	struct pool	*root = pool_tree_root(P->tree);
	struct request	 r = g->req;

	g->kind = GRANT_CONTAINER;
	g->pool = root;
	g->type = CPU_NORMAL;
	g->portion = 0;
	g->zero_req = 1;
	g->fallback = 1;
	g->dirty = 1;
	grant_explained(g, explain_other(EXPLAIN_FALLBACK, root->name, NULL));
	memset(&g->req, 0, sizeof g->req);
	g->req.zero_req = 1;
	/* Its memory is still accounted, of the types it asked for. */
	g->req.mem_req = r.mem_req;
	g->req.mem_lim = r.mem_lim;
	g->req.mem_types = r.mem_types != 0 ? r.mem_types : P->mem_default;
	g->req.prio = P->cfg->default_prio;
	cpuset_zero(&g->exclusive);
	undo_supply(P, root->id);
	P->sup[root->id].zero_req++;
	(void)policy_mem_take(P, g, NULL, 1, NULL);
}

static void
warn_dropped(struct policy_effects *fx, const char *id, int n)
{
	policy_warn(fx, "container %s: %d annotation%s, label or environment "
	    "entr%s of ours past the limits (%d annotations, %d %s* "
	    "variables, %d bytes; %d labels and %d bytes each of the pod's "
	    "and the container's) ignored", id, n, n > 1 ? "s" : "",
	    n > 1 ? "ies" : "y", POLICY_MAX_ANNOTATIONS, POLICY_MAX_CLAIM_ENV,
	    DRA_ENV_PREFIX, POLICY_MAX_KEPT_BYTES, POLICY_MAX_LABELS,
	    POLICY_MAX_LABEL_BYTES);
}

/* What is left of the budget with the metadata of old (being replaced,
 * or NULL) given back. */
static size_t
budget_room(const struct policy *P, const struct grant *old)
{
	size_t	used = P->kept - (old != NULL ? old->spec.cost : 0);

	return (used < POLICY_META_BUDGET ? POLICY_META_BUDGET - used : 0);
}

/*
 * A new container's metadata against what is left of the node's budget
 * (POLICY_META_BUDGET): kept whole when it fits, else without labels,
 * else refused, or, when the runtime already runs it (running), kept
 * with no metadata at all. Trimming is warned of and recorded in the
 * spec (the state says "trimmed"), and the container is placed by what
 * is kept, so a reload or restart places it the same way.
 */
static int
budget_fit(const struct policy *P, struct cspec *c, const struct grant *old,
    int running, struct policy_effects *fx, char **cause)
{
	size_t	room = budget_room(P, old), want = c->cost;
	int	all;

	if (want <= room)
		return (0);
	cspec_trim(c, 0);
	all = c->cost > room;
	if (all && !running) {
		xasprintf(cause, "container %s: its annotations and %s* "
		    "variables take %zu bytes of saved state, more than the "
		    "%zu left of the node's budget of kept metadata (%d bytes, "
		    "POLICY_META_BUDGET)", c->id, DRA_ENV_PREFIX, c->cost,
		    room, POLICY_META_BUDGET);
		return (-ENOSPC);
	}
	if (all)
		cspec_trim(c, 1);
	policy_warn(fx, "container %s: its metadata (%zu bytes of saved "
	    "state) passes the %zu left of the node's budget of kept metadata "
	    "(%d bytes, POLICY_META_BUDGET); kept without %s", c->id, want,
	    room, POLICY_META_BUDGET, all ? "its labels, annotations and "
	    "variables: placed as if it had none" : "its labels");
	return (0);
}

/*
 * A container grant of spec, allocated in P (not yet stored); prev is
 * the grant it replaces, if any. The grant takes spec's contents and
 * leaves it cleared; on error spec is left as it came, for the caller.
 */
static int
container_grant(struct policy *P, struct cspec *spec, const char *hint,
    const struct grant *prev, struct grant **out, struct policy_effects *fx,
    char **cause)
{
	struct affinity_set	 affs = { 0, NULL };
	struct grant		*g;
	int			 rc, pinned = 0;

	*out = NULL;
	g = grant_new(spec->id, GRANT_CONTAINER);
	cspec_move(&g->spec, spec);
	/* Its affinities are read whether or not it is placed by score:
	 * one pinned to a claim is refused for a bad annotation too. */
	if ((rc = request_from_spec(P, &g->spec, &g->req, cause)) == 0)
		coldstart_inherit(P, g, prev);
	if (rc != 0 ||
	    (rc = affinity_of(&g->spec, &affs, cause)) != 0 ||
	    (!(pinned = policy_pin_to_claims(P, g, prev, fx)) &&
	    (rc = policy_allocate_container(P, g, hint, &affs, fx,
	    cause)) != 0)) {
		affinity_set_clear(&affs);
		cspec_move(spec, &g->spec);
		grant_free(g);
		return (rc);
	}
	affinity_set_clear(&affs);
	/* A claim is a contract: its container's memory is accounted on
	 * the claim's nodes even when they are short. */
	if (pinned) {
		(void)policy_mem_take(P, g, NULL, 1, NULL);
		grant_explained(g, explain_other(EXPLAIN_CLAIMS, NULL, NULL));
	} else if (g->why != NULL && explain_how_of(g->why) == EXPLAIN_KEPT &&
	    prev != NULL && prev->why != NULL && g->pool != NULL)
		/* Kept where it was: say what put it there. */
		grant_explained(g, explain_other(EXPLAIN_KEPT, g->pool->name,
		    prev->why));
	if (g->req.mem_types_bad && fx != NULL)
		policy_warn(fx, "container %s: memory-type \"%s\": %s; its "
		    "memory is of the default types", g->key,
		    request_annotation(&g->spec, "memory-type"),
		    g->req.mem_types_bad == 1 ? "not dram, pmem, hbm or mixed, "
		    "separated by commas" : "no such memory on this machine");
	if (g->req.cold_bad && fx != NULL)
		policy_warn(fx, "container %s: cold start left out: its memory "
		    "would have no type but DRAM", g->key);
	*out = g;
	return (0);
}

/*
 * A grant of old's spec (a copy: old keeps its own) made again in P, with
 * old's pool as the hint and old as the grant it replaces; the pinning the
 * runtime has travels along. Not stored.
 */
static int
container_regrant(struct policy *P, const struct grant *old,
    struct grant **g, struct policy_effects *fx, char **cause)
{
	struct cspec	spec;
	int		rc;

	cspec_dup(&spec, &old->spec);
	rc = container_grant(P, &spec, old->pool ? old->pool->name : NULL,
	    old, g, fx, cause);
	cspec_clear(&spec);
	if (rc == 0)
		pinning_copy(&(*g)->applied, &old->applied);
	return (rc);
}

/*
 * The grant of a stored container made again from its spec, with what it
 * was as prev: how a container waiting for a claim gets pinned to it. On
 * failure it keeps its grant.
 */
int
policy_repin(struct policy *P, struct grant *old, struct policy_effects *fx,
    char **cause)
{
	struct undoctx	 u;
	struct grant	*g;
	int		 rc;

	undo_begin(P, fx, &u);
	supply_release(P, old);
	if ((rc = container_regrant(P, old, &g, fx, cause)) != 0) {
		undo_fail(P, &u);
		undo_end(P, &u);
		return (rc);
	}
	g->dirty = 1;
	policy_put(P, 0, g->key, g);
	undo_end(P, &u);
	return (0);
}

int
policy_create(struct policy *P, const struct container_spec *s,
    struct policy_effects *fx, char **cause)
{
	struct undoctx	 u;
	struct grant	*g, *old;
	struct cspec	 spec;
	int		 rc, dropped;

	if ((rc = cspec_check(s, cause)) != 0)
		return (rc);
	old = strmap_get(P->ctrs, s->id);
	if (old == NULL && strmap_count(P->ctrs) >= POLICY_MAX_CONTAINERS) {
		xasprintf(cause, "container %s: already %d containers", s->id,
		    POLICY_MAX_CONTAINERS);
		return (-ENOSPC);
	}
	undo_begin(P, fx, &u);
	/* A repeated create replaces the grant. */
	if (old != NULL)
		supply_release(P, old);
	if ((dropped = cspec_copy(&spec, s)) > 0)
		warn_dropped(fx, s->id, dropped);
	if ((rc = budget_fit(P, &spec, old, 0, fx, cause)) == 0)
		rc = container_grant(P, &spec, NULL, old, &g, fx, cause);
	cspec_clear(&spec);
	if (rc != 0) {
		undo_fail(P, &u);
		undo_end(P, &u);
		return (rc);
	}
	policy_put(P, 0, g->key, g);
	policy_refresh(P, g->key, 0, fx);
	fx->save = 1;
	undo_end(P, &u);
	return (0);
}

int
policy_update(struct policy *P, const char *id, long long request,
    long long limit, long long mem_limit, struct policy_effects *fx,
    char **cause)
{
	struct undoctx	 u;
	struct grant	*old, *g;
	struct cspec	 spec;
	int		 rc;

	if ((old = strmap_get(P->ctrs, id)) == NULL) {
		xasprintf(cause, "container %s: unknown", id);
		return (-ENOENT);
	}
	if (request < -1 || limit < -1 || request > 1000LL * CPUSET_SETSIZE ||
	    limit > 1000LL * CPUSET_SETSIZE) {
		xasprintf(cause, "container %s: CPU request or limit out of "
		    "range", id);
		return (-EINVAL);
	}
	if (mem_limit < -1 || mem_limit > POLICY_MAX_MEMORY) {
		xasprintf(cause, "container %s: memory limit out of range", id);
		return (-EINVAL);
	}
	undo_begin(P, fx, &u);
	cspec_dup(&spec, &old->spec);
	spec.request = request;
	spec.limit = limit;
	if (mem_limit >= 0)
		spec.mem_limit = mem_limit;
	if (old->kind == GRANT_CLAIM_PINNED) {
		/* Its CPUs are the claims', whatever it asks for; its
		 * memory is taken again at its new size. */
		g = grant_dup(old);
		cspec_clear(&g->spec);
		g->spec = spec;
		(void)request_from_spec(P, &g->spec, &g->req, NULL);
		coldstart_apply(P, g);
		policy_mem_drop(P, id);
		(void)policy_mem_take(P, g, NULL, 1, NULL);
		policy_put(P, 0, id, g);
		policy_refresh(P, id, 0, fx);
		fx->save = 1;
		undo_end(P, &u);
		return (0);
	}
	supply_release(P, old);
	rc = container_grant(P, &spec, old->pool ? old->pool->name : NULL, old,
	    &g, fx, cause);
	cspec_clear(&spec);
	if (rc != 0) {
		undo_fail(P, &u);
		undo_end(P, &u);
		return (rc);
	}
	pinning_copy(&g->applied, &old->applied);
	policy_put(P, 0, id, g);
	policy_refresh(P, g->key, 0, fx);
	fx->save = 1;
	undo_end(P, &u);
	return (0);
}

int
policy_remove(struct policy *P, const char *id, struct policy_effects *fx)
{
	struct grant	*g;
	struct undoctx	 u;

	if ((g = strmap_get(P->ctrs, id)) == NULL)
		return (0);
	undo_begin(P, fx, &u);
	claim_unwait(P, g);
	supply_release(P, g);
	policy_put(P, 0, id, NULL);
	policy_refresh(P, NULL, 0, fx);
	fx->save = 1;
	undo_end(P, &u);
	return (0);
}

/*
 * A container the runtime already runs that P cannot place as it asks
 * (why): rather than leave it untracked, or refuse the event that found
 * it so, it shares the root pool's CPUs (grant_fallback), said in a
 * warning. spec is taken. Not stored.
 */
static struct grant *
fallback_new(struct policy *P, struct cspec *spec, const char *why,
    struct policy_effects *fx)
{
	struct grant	*g;

	policy_warn(fx, "%s; it shares the root pool's CPUs", why);
	g = grant_new(spec->id, GRANT_CONTAINER);
	cspec_move(&g->spec, spec);
	/* Its memory as asked, when that much can be read. */
	(void)request_from_spec(P, &g->spec, &g->req, NULL);
	grant_fallback(P, g);
	return (g);
}

/*
 * Carry a container grant into another policy: the same CPUs in the pool
 * of the same name when they are still free there, else allocated anew
 * with that pool as the hint. The pinning the runtime has travels along.
 */
int
policy_carry_container(struct policy *N, const struct grant *old,
    const struct cpuset *mem, struct policy_effects *fx, char **cause)
{
	struct grant	*g;
	char		*why = NULL;
	int		 rc;

	if (old->kind == GRANT_CONTAINER && old->pool != NULL &&
	    !old->fallback) {
		g = grant_new(old->key, GRANT_CONTAINER);
		cspec_dup(&g->spec, &old->spec);
		g->req = old->req;
		g->type = old->type;
		g->portion = old->portion;
		g->zero_req = old->zero_req;
		g->cold_until = old->cold_until;
		g->cold_done = old->cold_done;
		cpuset_copy(&g->exclusive, &old->exclusive);
		g->pool = pool_tree_find(N->tree, old->pool->name);
		if (g->pool != NULL && supply_reserve(N, g, &why) == 0) {
			/* Its memory where it was, or found again. */
			(void)policy_mem_take(N, g, mem, 1, NULL);
			pinning_copy(&g->applied, &old->applied);
			policy_put(N, 0, g->key, g);
			rewait(N, g, fx);
			return (0);
		}
		free(why);
		grant_free(g);
	}
	if ((rc = container_regrant(N, old, &g, fx, cause)) != 0)
		return (rc);
	policy_put(N, 0, g->key, g);
	return (0);
}

/*
 * policy_carry_container, or, when N cannot place old as it asks, a
 * fallback (fallback_new) with the pinning the runtime has: a container
 * that no longer fits refuses neither a reload nor a start (R-CONF-3:
 * only a claim does).
 */
void
policy_carry_or_fall_back(struct policy *N, const struct grant *old,
    const struct cpuset *mem, struct policy_effects *fx)
{
	struct grant	*g;
	struct cspec	 spec;
	char		*why = NULL;

	if (policy_carry_container(N, old, mem, fx, &why) == 0)
		return;
	cspec_dup(&spec, &old->spec);
	g = fallback_new(N, &spec, why, fx);
	free(why);
	pinning_copy(&g->applied, &old->applied);
	policy_put(N, 0, g->key, g);
}

/*
 * A container of P carried into N with the memory zone it has in P; with
 * fall_back, as policy_carry_or_fall_back (never failing).
 */
static int
carry_from(struct policy *N, const struct policy *P, const struct grant *old,
    int fall_back, struct policy_effects *fx, char **cause)
{
	struct cpuset	zone = CPUSET_INITIALIZER;
	const struct cpuset *mem;
	int		rc = 0;

	mem = policy_mem_zone(P, old->key, &zone) ? &zone : NULL;
	if (fall_back)
		policy_carry_or_fall_back(N, old, mem, fx);
	else
		rc = policy_carry_container(N, old, mem, fx, cause);
	cpuset_clear(&zone);
	return (rc);
}

/* Claims first, with the same CPUs, or the whole thing fails. */
int
policy_carry_claims(struct policy *N, const struct policy *P, char **cause)
{
	struct grant	**v;
	size_t		  i, n;
	int		  rc = 0;

	v = policy_sorted(P->claims, &n);
	for (i = 0; i < n && rc == 0; i++)
		if ((rc = claim_reinstate(N, v[i]->key, &v[i]->exclusive,
		    cause)) == 0)
			claim_copy_meta(strmap_get(N->claims, v[i]->key), v[i]);
	free(v);
	return (rc);
}

/*
 * N, built from P, becomes P's state; the old state is kept for an undo.
 * N's pinnings are made before it is swapped in, while it has no undo
 * log: an undo puts the old state back whole, so what each container
 * had applied in N (a thousand entries for a first Synchronize) would
 * be saved for nothing.
 */
static void
commit_swap(struct policy *P, struct policy *N, struct policy_effects *fx)
{
	struct undoctx	u;

	undo_begin(P, fx, &u);
	policy_refresh(N, NULL, 1, fx);
	policy_swap(P, N);
	undo_swapped(P, N);
	fx->save = 1;
	undo_end(P, &u);
}

/* A grant of exclusive CPUs of its own, carried before shared ones. */
int
holds_cpus(const struct grant *g)
{
	return (g->kind == GRANT_CONTAINER && !g->fallback &&
	    !cpuset_empty(&g->exclusive));
}

int
policy_reconfigure(struct policy *P, const struct config *cfg,
    struct policy_effects *fx, char **cause)
{
	struct policy	*N;
	struct grant	**v;
	size_t		  i, n;
	int		  rc, pass;

	if ((rc = policy_build(P->topo, cfg, &N, cause)) != 0)
		return (rc);
	if ((rc = policy_carry_claims(N, P, cause)) != 0)
		goto fail;
	/* Containers never refuse it: one that no longer fits falls back. */
	v = policy_sorted(P->ctrs, &n);
	strmap_reserve(N->ctrs, n);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if (holds_cpus(v[i]) == (pass == 0))
				(void)carry_from(N, P, v[i], 1, fx, NULL);
	free(v);
	commit_swap(P, N, fx);
	return (0);
fail:
	policy_free(N);
	return (rc);
}

/*
 * A known container's grant with the pod name and labels the runtime
 * gives now (Kubernetes lets labels change; affinities match them), or
 * NULL when they are as kept or the runtime names another pod.
 */
static struct grant *
relabeled(const struct grant *old, const struct container_spec *s,
    size_t *room, struct policy_effects *fx)
{
	struct grant	*g;
	struct cspec	 c;
	int		 dropped;

	/* Trimmed at the budget: it stays so until created again. */
	if (s->pod == NULL || old->spec.pod == NULL ||
	    strcmp(s->pod, old->spec.pod) != 0 || old->spec.trimmed)
		return (NULL);
	if (cspec_same_meta(&old->spec, s))
		return (NULL);
	if ((dropped = cspec_copy(&c, s)) > 0)
		warn_dropped(fx, s->id, dropped);
	g = grant_dup(old);
	cspec_take_meta(&g->spec, &c);
	cspec_clear(&c);
	/* Labels that grow take from the budget's room, or are not taken. */
	if (g->spec.cost > old->spec.cost) {
		if (g->spec.cost - old->spec.cost > *room) {
			policy_warn(fx, "container %s: its new labels pass the "
			    "node's budget of kept metadata (%d bytes, "
			    "POLICY_META_BUDGET); it keeps its old ones",
			    old->key, POLICY_META_BUDGET);
			grant_free(g);
			return (NULL);
		}
		*room -= g->spec.cost - old->spec.cost;
	}
	return (g);
}

int
policy_sync(struct policy *P, const struct container_spec *specs, int n,
    struct policy_effects *fx, char **cause)
{
	struct policy	*N;
	struct strmap	*seen;
	struct grant	*old, *g, *fresh;
	struct cspec	 spec;
	char		*why = NULL;
	size_t		 room = budget_room(P, NULL);
	int		 i, rc = 0, dropped, pass, whole;

	if (n < 0 || n > POLICY_MAX_CONTAINERS) {
		xasprintf(cause, "sync: %d containers, at most %d", n,
		    POLICY_MAX_CONTAINERS);
		return (-EINVAL);
	}
	seen = strmap_new_borrowing();
	strmap_reserve(seen, (size_t)n);
	for (i = 0; i < n && rc == 0; i++) {
		if ((rc = cspec_check(&specs[i], cause)) != 0)
			break;
		if (strmap_get(seen, specs[i].id) != NULL) {
			xasprintf(cause, "sync: container %s listed twice",
			    specs[i].id);
			rc = -EINVAL;
		}
		strmap_put(seen, specs[i].id, (void *)&specs[i]);
	}
	strmap_free(seen);
	if (rc != 0)
		return (rc);

	if ((rc = policy_build(P->topo, P->cfg, &N, cause)) != 0)
		return (rc);
	if ((rc = policy_carry_claims(N, P, cause)) != 0)
		goto fail;
	strmap_reserve(N->ctrs, (size_t)n);
	if (fx != NULL) {
		free(fx->read);
		fx->read = xcalloc((size_t)n + 1, sizeof *fx->read);
	}
	/*
	 * Known containers keep their grants, in the runtime's order, those
	 * with exclusive CPUs first: shared portions were granted in what
	 * their CPUs left, and taken first they could crowd them out.
	 */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			if ((old = strmap_get(P->ctrs, specs[i].id)) == NULL ||
			    holds_cpus(old) != (pass == 0))
				continue;
			fresh = relabeled(old, &specs[i], &room, fx);
			if (carry_from(N, P, fresh ? fresh : old, 0, fx,
			    &why) != 0) {
				policy_warn(fx, "%s", why);
				free(why);
				why = NULL;
			}
			grant_free(fresh);
		}
	for (i = 0; i < n; i++) {
		if (strmap_get(N->ctrs, specs[i].id) != NULL)
			continue;
		if ((dropped = cspec_copy(&spec, &specs[i])) > 0)
			warn_dropped(fx, specs[i].id, dropped);
		/* Running already: trimmed, never refused. */
		(void)budget_fit(N, &spec, NULL, 1, fx, NULL);
		whole = !spec.trimmed;
		rc = container_grant(N, &spec, NULL, NULL, &g, fx, &why);
		if (rc != 0) {
			g = fallback_new(N, &spec, why, fx);
			free(why);
			why = NULL;
		}
		cspec_clear(&spec);
		/* Its copy, as it read it, for the event. */
		if (whole && fx != NULL)
			fx->read[i] = &g->spec;
		policy_put(N, 0, g->key, g);
	}
	commit_swap(P, N, fx);
	return (0);
fail:
	policy_free(N);
	if (fx != NULL) {
		free(fx->read);
		fx->read = NULL;
	}
	return (rc);
}

/* Read access. */

const struct config *
policy_config(const struct policy *P)
{
	return (P->cfg);
}

const struct pool_tree *
policy_tree(const struct policy *P)
{
	return (P->tree);
}

int
policy_devices(const struct policy *P, struct dradev **devs)
{
	*devs = P->devs;
	return (P->ndevs);
}

int
policy_ncontainers(const struct policy *P)
{
	return ((int)strmap_count(P->ctrs));
}

size_t
policy_kept_bytes(const struct policy *P)
{
	return (P->kept);
}

int
policy_nclaims(const struct policy *P)
{
	return ((int)strmap_count(P->claims));
}

const struct cpuset *
policy_claim_cpus(const struct policy *P, const char *uid)
{
	const struct grant	*g = strmap_get(P->claims, uid);

	return (g != NULL ? &g->exclusive : NULL);
}

const struct pinning *
policy_pinning(const struct policy *P, const char *id)
{
	const struct grant	*g = strmap_get(P->ctrs, id);

	return (g != NULL ? &g->applied : NULL);
}

json_t *
policy_grants_json(const struct policy *P)
{
	struct grant	**v;
	struct cpuset	  zone = CPUSET_INITIALIZER;
	json_t		 *a, *o;
	size_t		  i, n;

	a = json_array();
	v = policy_sorted(P->ctrs, &n);
	for (i = 0; i < n; i++) {
		/* What the runtime is not told is left alone: null. */
		o = json_pack("{s:s, s:o, s:o, s:s}", "id", v[i]->key,
		    "cpus", v[i]->applied.pin_cpus ?
		    view_cpuset(&v[i]->applied.cpus) : json_null(),
		    "mems", v[i]->applied.pin_mems ?
		    view_cpuset(&v[i]->applied.mems) : json_null(),
		    "pool", v[i]->pool ? v[i]->pool->name : "claims");
		if (policy_mem_zone(P, v[i]->key, &zone))
			json_object_set_new(o, "memory", json_pack("{s:I, s:o}",
			    "bytes", (json_int_t)policy_mem_size(P, v[i]->key),
			    "nodes", view_cpuset(&zone)));
		json_array_append_new(a, o);
	}
	cpuset_clear(&zone);
	free(v);
	v = policy_sorted(P->claims, &n);
	for (i = 0; i < n; i++) {
		o = json_pack("{s:s, s:o, s:s, s:s}", "claim", v[i]->key,
		    "cpus", view_cpuset(&v[i]->exclusive), "mems", "",
		    "pool", v[i]->pool->name);
		json_array_append_new(a, o);
	}
	free(v);
	return (a);
}

/*
 * A pool's memory by type: the bytes its nodes of the type hold and
 * those not accounted to any container (libmem's zone capacity and free:
 * what containers whose zones lie within those nodes take).
 */
static json_t *
pool_memory_json(const struct policy *P, const struct pool *p)
{
	static const char *const names[MEM_TYPE_HBM + 1] = { "dram", "pmem",
	    "hbm" };
	json_t		*o = json_object();
	memmask_t	 m;
	int		 ty;

	for (ty = MEM_TYPE_DRAM; ty <= MEM_TYPE_HBM; ty++) {
		if ((m = policy_mem_mask(P, &p->mems_type[ty])) == 0)
			continue;
		json_object_set_new(o, names[ty], json_pack("{s:I, s:I}",
		    "total", (json_int_t)memalloc_zone_capacity(P->mem, m),
		    "free", (json_int_t)memalloc_zone_free(P->mem, m)));
	}
	return (o);
}

json_t *
policy_pools_json(const struct policy *P)
{
	json_t		*a, *o;
	const struct pool *p;
	int		 i;

	a = view_pools(P->tree);
	for (i = 0; i < pool_tree_count(P->tree); i++) {
		p = pool_tree_get(P->tree, i);
		o = json_array_get(a, (size_t)i);
		json_object_set_new(o, "freeIsolated",
		    view_cpuset(&P->sup[i].isolated));
		json_object_set_new(o, "freeSharable",
		    view_cpuset(&P->sup[i].sharable));
		json_object_set_new(o, "allocatableShared",
		    json_integer(supply_allocatable_shared(P, p)));
		json_object_set_new(o, "grantedShared",
		    json_integer(P->sup[i].granted_shared));
		json_object_set_new(o, "grantedReserved",
		    json_integer(P->sup[i].granted_reserved));
		if (P->mem != NULL)
			json_object_set_new(o, "memory", pool_memory_json(P, p));
	}
	return (a);
}

static void
export_add(struct policy_kv *kv, int *n, const char *key,
    const struct cpuset *s, int always)
{
	if (!always && cpuset_empty(s))
		return;
	kv[*n].key = xstrdup(key);
	kv[*n].value = cpuset_format(s);
	(*n)++;
}

/*
 * The memory nodes of a pool for memory of types (the zone memzone_offer
 * gives, as Go's libmem finds it before any accounting), else all its
 * nodes: what a container is pinned to and its ALL_MEMS.
 */
static const struct cpuset *
mems_of_types(const struct policy *P, const struct pool *p, unsigned types)
{
	const struct mem_offer	*o = policy_mem_offer(P, p, types);

	return (cpuset_empty(&o->zone) ? &p->mems : &o->zone);
}

static void
export_mems(const struct policy *P, const struct pool *p, unsigned types,
    struct cpuset *mems)
{
	cpuset_copy(mems, mems_of_types(P, p, types));
}

/* What a pool's file says of memory. */
static const struct cpuset *
default_mems(const struct policy *P, const struct pool *p)
{
	return (mems_of_types(P, p, P->mem_default));
}

/* DRAM_MEMS, PMEM_MEMS and HBM_MEMS: mems split by type, as the Go
 * policy exports them (each only when it has nodes). */
static void
export_typed(const struct policy *P, struct policy_kv *kv, int *n,
    const struct cpuset *mems)
{
	/* By enum mem_type. */
	static const char *const names[MEM_TYPE_HBM + 1] = { "DRAM_MEMS",
	    "PMEM_MEMS", "HBM_MEMS" };
	const struct topo_node	*node;
	struct cpuset		 of[MEM_TYPE_HBM + 1];
	int			 id, ty;

	for (ty = 0; ty <= MEM_TYPE_HBM; ty++)
		cpuset_init(&of[ty]);
	CPUSET_FOREACH(id, mems) {
		if ((node = topology_node_by_id(P->topo, id)) != NULL &&
		    node->memory > 0 && (int)node->type <= MEM_TYPE_HBM)
			cpuset_add(&of[node->type], id);
	}
	for (ty = 0; ty <= MEM_TYPE_HBM; ty++) {
		export_add(kv, n, names[ty], &of[ty], 0);
		cpuset_clear(&of[ty]);
	}
}

int
policy_export(const struct policy *P, const char *id, struct policy_kv **out,
    int *nout)
{
	const struct grant	*g = strmap_get(P->ctrs, id);
	struct cpuset		 iso = CPUSET_INITIALIZER, excl = CPUSET_INITIALIZER;
	struct cpuset		 shared = CPUSET_INITIALIZER, mems = CPUSET_INITIALIZER;
	struct policy_kv	*kv;
	int			 n = 0;

	*out = NULL;
	*nout = 0;
	if (g == NULL)
		return (-ENOENT);
	kv = xcalloc(8, sizeof *kv);
	if (g->kind == GRANT_CLAIM_PINNED) {
		export_add(kv, &n, "ALL_MEMS", &g->applied.mems, 1);
		export_add(kv, &n, "DRA_CPUS", &g->exclusive, 1);
		export_typed(P, kv, &n, &g->applied.mems);
	} else {
		if (g->pool != NULL) {
			cpuset_copy(&iso, &g->exclusive);
			cpuset_and(&iso, &g->pool->isolated);
			/* Preserved memory is not pinned: its file says
			 * the pool's, as for the default types. */
			if (g->req.mem_preserve ||
			    !policy_mem_zone(P, g->key, &mems))
				export_mems(P, g->pool, policy_mem_types(P, g),
				    &mems);
			if (g->type == CPU_NORMAL && (g->portion > 0 ||
			    cpuset_empty(&g->exclusive)))
				supply_shared_cpus(P, g->pool, &shared);
		}
		cpuset_copy(&excl, &g->exclusive);
		cpuset_andnot(&excl, &iso);
		/* Sorted by name. */
		export_add(kv, &n, "ALL_MEMS", &mems, 1);
		export_add(kv, &n, "EXCLUSIVE_CPUS", &excl, 0);
		export_add(kv, &n, "ISOLATED_CPUS", &iso, 0);
		export_add(kv, &n, "SHARED_CPUS", &shared, 0);
		export_typed(P, kv, &n, &mems);
	}
	cpuset_clear(&iso);
	cpuset_clear(&excl);
	cpuset_clear(&shared);
	cpuset_clear(&mems);
	*out = kv;
	*nout = n;
	return (0);
}

const struct pool *
policy_export_shared_pool(const struct policy *P, const char *id)
{
	return (shared_file_pool(P, strmap_get(P->ctrs, id)));
}

static const struct pool *
shared_file_pool(const struct policy *P, const struct grant *g)
{
	struct cpuset		 zone = CPUSET_INITIALIZER;
	int			 own = 0;

	/* Its memory types too: a pool's file says the default ones. */
	if (g == NULL || g->kind != GRANT_CONTAINER || g->pool == NULL ||
	    g->type != CPU_NORMAL || !cpuset_empty(&g->exclusive) ||
	    policy_mem_types(P, g) != P->mem_default)
		return (NULL);
	/* And the pool's memory nodes: one whose memory was widened has
	 * a file of its own. */
	if (!g->req.mem_preserve && policy_mem_zone(P, g->key, &zone))
		own = !cpuset_equal(&zone, default_mems(P, g->pool));
	cpuset_clear(&zone);
	return (own ? NULL : g->pool);
}

/* What policy_export says of every container policy_export_shared_pool
 * gives p for. */
int
policy_export_pool(const struct policy *P, const struct pool *p,
    struct policy_kv **out, int *nout)
{
	struct cpuset		 shared = CPUSET_INITIALIZER, mems = CPUSET_INITIALIZER;
	struct policy_kv	*kv;
	int			 n = 0;

	kv = xcalloc(5, sizeof *kv);
	export_mems(P, p, P->mem_default, &mems);
	supply_shared_cpus(P, p, &shared);
	export_add(kv, &n, "ALL_MEMS", &mems, 1);
	export_add(kv, &n, "SHARED_CPUS", &shared, 0);
	export_typed(P, kv, &n, &mems);
	cpuset_clear(&shared);
	cpuset_clear(&mems);
	*out = kv;
	*nout = n;
	return (0);
}

void
policy_export_free(struct policy_kv *kv, int n)
{
	int	i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}
