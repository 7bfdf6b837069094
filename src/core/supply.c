/*
 * supply.c owns the free supply of every pool (anchor §1.2, §2.4, §4):
 * how much shared and reserved CPU can still be granted, which CPUs can be
 * sliced off as exclusive, and the accounting that keeps every pool's free
 * sets consistent when a grant takes or returns CPUs.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>

#include "cpualloc.h"
#include "policy_priv.h"
#include "xmalloc.h"

void
supply_init_all(struct policy *P)
{
	struct pool	*p;
	int		 i, n = pool_tree_count(P->tree);

	P->sup = xcalloc((size_t)n, sizeof *P->sup);
	for (i = 0; i < n; i++) {
		p = pool_tree_get(P->tree, i);
		cpuset_init(&P->sup[i].isolated);
		cpuset_init(&P->sup[i].sharable);
		cpuset_copy(&P->sup[i].isolated, &p->isolated);
		cpuset_copy(&P->sup[i].sharable, &p->sharable);
	}
}

void
supply_clear_all(struct policy *P)
{
	int	i;

	if (P->sup == NULL || P->tree == NULL)
		return;
	for (i = 0; i < pool_tree_count(P->tree); i++) {
		cpuset_clear(&P->sup[i].isolated);
		cpuset_clear(&P->sup[i].sharable);
	}
	free(P->sup);
	P->sup = NULL;
}

/* Shared and reserved milli-CPU granted in a pool and below it. */
static void
subtree_granted(const struct policy *P, const struct pool *p, int *shared,
    int *reserved, int *zero)
{
	int	i;

	*shared += P->sup[p->id].granted_shared;
	*reserved += P->sup[p->id].granted_reserved;
	*zero += P->sup[p->id].zero_req;
	for (i = 0; i < p->nchildren; i++)
		subtree_granted(P, p->children[i], shared, reserved, zero);
}

static int
own_shared(const struct policy *P, const struct pool *p, int *zero)
{
	int	shared = 0, reserved = 0;

	*zero = 0;
	subtree_granted(P, p, &shared, &reserved, zero);
	return (1000 * cpuset_count(&P->sup[p->id].sharable) - shared);
}

/*
 * Shared CPU this pool can still grant, capped by every ancestor so none
 * of them is overcommitted, less one milli-CPU when a container without a
 * CPU request runs in or below it: such a container must keep a CPU.
 */
int
supply_allocatable_shared(const struct policy *P, const struct pool *p)
{
	const struct pool	*a;
	int			 shared, ashared, zero, z;

	shared = own_shared(P, p, &zero);
	for (a = p->parent; a != NULL; a = a->parent) {
		ashared = own_shared(P, a, &z);
		if (ashared < shared)
			shared = ashared;
	}
	if (zero > 0)
		shared--;
	return (shared);
}

static int
own_reserved(const struct policy *P, const struct pool *p)
{
	int	shared = 0, reserved = 0, zero = 0;

	subtree_granted(P, p, &shared, &reserved, &zero);
	return (1000 * cpuset_count(&p->reserved) - reserved);
}

int
supply_allocatable_reserved(const struct policy *P, const struct pool *p)
{
	const struct pool	*a;
	int			 reserved, r;

	if (cpuset_empty(&p->reserved))
		return (-1);
	reserved = own_reserved(P, p);
	for (a = p->parent; a != NULL; a = a->parent)
		if ((r = own_reserved(P, a)) < reserved)
			reserved = r;
	return (reserved);
}

/*
 * supply_allocatable_shared and supply_allocatable_reserved of every
 * pool, by id, in two passes over the pools instead of a walk per pool
 * and ancestor: scoring asks them of every pool for every container. The
 * ids are post-order, so going up the ids each pool's sums are whole
 * before its parent takes them, and going down each pool's parent is
 * capped before the pool.
 */
void
supply_allocatable_every(const struct policy *P, int *shared, int *reserved)
{
	const struct pool	*p;
	const struct supply	*sup;
	int			 np = pool_tree_count(P->tree), i, a, own;
	int			*ts, *tr, *tz, buf[3 * POOLS_ON_STACK];

	ts = xscratch(buf, sizeof buf, 3 * (size_t)np, sizeof *ts);
	tr = ts + np;
	tz = tr + np;
	/* The grants of every pool and of all below it. */
	for (i = 0; i < np; i++) {
		p = pool_tree_get(P->tree, i);
		sup = &P->sup[i];
		ts[i] += sup->granted_shared;
		tr[i] += sup->granted_reserved;
		tz[i] += sup->zero_req;
		if (p->parent != NULL) {
			a = p->parent->id;
			ts[a] += ts[i];
			tr[a] += tr[i];
			tz[a] += tz[i];
		}
	}
	/* Each pool's own room capped by its ancestors': ts and tr then
	 * hold the capped rooms, which its children read. */
	for (i = np - 1; i >= 0; i--) {
		p = pool_tree_get(P->tree, i);
		own = 1000 * cpuset_count(&P->sup[i].sharable) - ts[i];
		ts[i] = p->parent != NULL && ts[p->parent->id] < own ?
		    ts[p->parent->id] : own;
		own = 1000 * p->nreserved - tr[i];
		tr[i] = p->parent != NULL && tr[p->parent->id] < own ?
		    tr[p->parent->id] : own;
		shared[i] = tz[i] > 0 ? ts[i] - 1 : ts[i];
		reserved[i] = p->nreserved == 0 ? -1 : tr[i];
	}
	xscratch_free(ts, buf);
}

/*
 * The sharable CPUs that can become exclusive without squeezing any pool's
 * shared grants: from the pool if it is a leaf, else from every pool below
 * it, as many whole CPUs as each can spare.
 */
static void
sliceable_walk(const struct policy *P, const struct pool *top,
    const struct pool *p, struct cpuset *out, struct cpuset *from,
    struct cpuset *pick)
{
	int	i, n;

	for (i = 0; i < p->nchildren; i++)
		sliceable_walk(P, top, p->children[i], out, from, pick);
	if (p == top && p->nchildren > 0)
		return;
	n = supply_allocatable_shared(P, p) / 1000;
	if (n <= 0)
		return;
	cpuset_copy(from, &P->sup[p->id].sharable);
	if (n >= cpuset_count(from)) {
		cpuset_or(out, from);
		return;
	}
	/* n < |from|, so the allocator cannot fail. */
	if (cpualloc_pick(P->alloc, from, n, CPU_PRIO_NONE, CPUALLOC_ALL, pick,
	    NULL) == 0)
		cpuset_or(out, pick);
}

void
supply_sliceable(const struct policy *P, const struct pool *p,
    struct cpuset *out)
{
	struct cpuset	from = CPUSET_INITIALIZER, pick = CPUSET_INITIALIZER;

	cpuset_zero(out);
	sliceable_walk(P, p, p, out, &from, &pick);
	cpuset_clear(&from);
	cpuset_clear(&pick);
}

/*
 * Exclusive CPUs leave the free sets of every pool above and below the
 * grant's own, or come back to those whose static supply has them.
 */
static void
account_one(struct policy *P, const struct pool *p, const struct cpuset *cpus,
    int take, struct cpuset *part)
{
	struct supply	*s = &P->sup[p->id];

	/* The generation moves only when a free set does. */
	if (take) {
		if (!cpuset_intersects(&s->isolated, cpus) &&
		    !cpuset_intersects(&s->sharable, cpus))
			return;
		undo_supply(P, p->id);
		supply_stamp(P, p->id);
		cpuset_andnot(&s->isolated, cpus);
		cpuset_andnot(&s->sharable, cpus);
		return;
	}
	cpuset_copy(part, cpus);
	cpuset_and(part, &p->isolated);
	if (!cpuset_subset(part, &s->isolated)) {
		undo_supply(P, p->id);
		supply_stamp(P, p->id);
		cpuset_or(&s->isolated, part);
	}
	cpuset_copy(part, cpus);
	cpuset_and(part, &p->sharable);
	if (!cpuset_subset(part, &s->sharable)) {
		undo_supply(P, p->id);
		supply_stamp(P, p->id);
		cpuset_or(&s->sharable, part);
	}
}

static void
account_below(struct policy *P, const struct pool *p,
    const struct cpuset *cpus, int take, struct cpuset *part)
{
	int	i;

	for (i = 0; i < p->nchildren; i++) {
		account_one(P, p->children[i], cpus, take, part);
		account_below(P, p->children[i], cpus, take, part);
	}
}

static void
account(struct policy *P, const struct pool *p, const struct cpuset *cpus,
    int take)
{
	const struct pool	*a;
	struct cpuset		 part = CPUSET_INITIALIZER;

	if (cpuset_empty(cpus))
		return;
	undo_supply(P, p->id);
	supply_stamp(P, p->id);
	account_below(P, p, cpus, take, &part);
	for (a = p->parent; a != NULL; a = a->parent)
		account_one(P, a, cpus, take, &part);
	cpuset_clear(&part);
}

static void
add_portion(struct policy *P, const struct grant *g, int sign)
{
	struct supply	*s = &P->sup[g->pool->id];

	undo_supply(P, g->pool->id);
	if (g->type == CPU_NORMAL) {
		s->granted_shared += sign * g->portion;
		s->zero_req += sign * (g->zero_req ? 1 : 0);
	} else if (g->type == CPU_RESERVED)
		s->granted_reserved += sign * g->portion;
}

void
supply_release(struct policy *P, struct grant *g)
{
	struct supply	*s;
	struct cpuset	 iso = CPUSET_INITIALIZER, shr = CPUSET_INITIALIZER;

	/* A container's memory goes with its CPUs. */
	if (g->kind != GRANT_CLAIM)
		policy_mem_drop(P, g->key);
	if (g->pool == NULL)
		return;
	undo_supply(P, g->pool->id);
	s = &P->sup[g->pool->id];
	cpuset_copy(&iso, &g->exclusive);
	cpuset_and(&iso, &g->pool->isolated);
	cpuset_copy(&shr, &g->exclusive);
	cpuset_andnot(&shr, &iso);
	cpuset_or(&s->isolated, &iso);
	cpuset_or(&s->sharable, &shr);
	add_portion(P, g, -1);
	account(P, g->pool, &g->exclusive, 0);
	cpuset_clear(&iso);
	cpuset_clear(&shr);
}

/*
 * Take a grant whose CPUs are already chosen (a claim, or one restored or
 * reinstated): refuse CPUs another grant holds and sharable CPUs whose loss
 * would overcommit the shared portions granted (anchor §4).
 */
int
supply_reserve(struct policy *P, struct grant *g, char **cause)
{
	struct supply	*s = &P->sup[g->pool->id];
	struct cpuset	 iso = CPUSET_INITIALIZER, excl = CPUSET_INITIALIZER;
	char		*text;
	int		 need, have, rc = -ENOSPC;

	if (g->type == CPU_NORMAL) {
		cpuset_copy(&iso, &g->exclusive);
		cpuset_and(&iso, &g->pool->isolated);
		cpuset_copy(&excl, &g->exclusive);
		cpuset_andnot(&excl, &iso);
		if (!cpuset_subset(&iso, &s->isolated)) {
			text = cpuset_format(&iso);
			xasprintf(cause, "can't reserve isolated CPUs (%s) of %s "
			    "from %s", text, g->key, g->pool->name);
			free(text);
			goto out;
		}
		if (!cpuset_subset(&excl, &s->sharable)) {
			text = cpuset_format(&excl);
			xasprintf(cause, "can't reserve exclusive CPUs (%s) of %s "
			    "from %s", text, g->key, g->pool->name);
			free(text);
			goto out;
		}
		need = 1000 * cpuset_count(&excl) + g->portion;
		have = supply_allocatable_shared(P, g->pool);
		if (have < need) {
			xasprintf(cause, "can't reserve %d shared CPUs of %s from "
			    "%s (%dm allocatable)", g->portion, g->key,
			    g->pool->name, have);
			goto out;
		}
		undo_supply(P, g->pool->id);
		cpuset_andnot(&s->isolated, &iso);
		cpuset_andnot(&s->sharable, &excl);
	} else if (g->type == CPU_RESERVED && g->portion > 0) {
		have = supply_allocatable_reserved(P, g->pool);
		if (have < g->portion) {
			xasprintf(cause, "can't reserve %d reserved CPUs of %s "
			    "from %s (%dm allocatable)", g->portion, g->key,
			    g->pool->name, have);
			goto out;
		}
	}
	add_portion(P, g, 1);
	account(P, g->pool, &g->exclusive, 1);
	rc = 0;
out:
	cpuset_clear(&iso);
	cpuset_clear(&excl);
	return (rc);
}

/*
 * Allocate a container's request from a pool (anchor §2.4): exclusive CPUs
 * from the free isolated set when isolation is preferred and enough are
 * free, else sliced off the sharable set; then the shared or reserved
 * fraction. On failure nothing is taken.
 */
int
supply_allocate(struct policy *P, struct pool *p, const struct request *r,
    struct grant *g, char **cause)
{
	struct supply	*s = &P->sup[p->id];
	struct cpuset	 from = CPUSET_INITIALIZER, pick = CPUSET_INITIALIZER;
	struct cpuset	 iso = CPUSET_INITIALIZER;
	enum cpu_type	 type = r->type;
	char		*text, *why = NULL;
	int		 full = r->full, fraction = r->fraction, isolated = 0;
	int		 have, rc = -ENOSPC;

	if (type == CPU_RESERVED && full > 0) {
		fraction += 1000 * full;
		full = 0;
	}
	if (type == CPU_RESERVED && fraction > 0 &&
	    supply_allocatable_reserved(P, p) < fraction)
		type = CPU_NORMAL;

	if (full > 0) {
		if (r->isolate && cpuset_count(&s->isolated) >= full) {
			cpuset_copy(&from, &s->isolated);
			isolated = 1;
		} else if ((have = supply_allocatable_shared(P, p)) >= 1000 * full)
			supply_sliceable(P, p, &from);
		else {
			text = cpuset_format(&s->sharable);
			xasprintf(cause, "%s: can't slice %d exclusive CPUs from "
			    "%s, %dm available", p->name, full, text, have);
			free(text);
			goto out;
		}
		if (cpualloc_pick(P->alloc, &from, full, r->prio, CPUALLOC_ALL,
		    &pick, &why) != 0) {
			xasprintf(cause, "%s: can't take %d exclusive CPUs: %s",
			    p->name, full, why);
			free(why);
			goto out;
		}
		if (r->strict_isolate) {
			cpuset_copy(&iso, &pick);
			cpuset_and(&iso, &p->isolated);
			if (cpuset_count(&iso) < full) {
				xasprintf(cause, "%s: %d isolated CPUs required, "
				    "only %d free", p->name, full,
				    cpuset_count(&s->isolated));
				goto out;
			}
		}
	}

	g->pool = p;
	g->type = type;
	g->portion = 0;
	g->zero_req = r->zero_req;
	g->picked_by = full > 0 ? cpualloc_last_steps(P->alloc) : 0;
	cpuset_copy(&g->exclusive, &pick);
	undo_supply(P, p->id);
	if (isolated)
		cpuset_andnot(&s->isolated, &pick);
	else
		cpuset_andnot(&s->sharable, &pick);
	account(P, p, &pick, 1);

	if (fraction > 0) {
		have = type == CPU_NORMAL ? supply_allocatable_shared(P, p) :
		    supply_allocatable_reserved(P, p);
		if (have < fraction) {
			xasprintf(cause, "%s: not enough %s CPU for %dm, %dm "
			    "available", p->name, type == CPU_NORMAL ?
			    "sharable" : "reserved", fraction, have);
			/* Give back the exclusive CPUs taken above. */
			if (isolated)
				cpuset_or(&s->isolated, &pick);
			else
				cpuset_or(&s->sharable, &pick);
			account(P, p, &pick, 0);
			cpuset_zero(&g->exclusive);
			g->pool = NULL;
			goto out;
		}
	}
	g->portion = fraction;
	add_portion(P, g, 1);
	rc = 0;
out:
	cpuset_clear(&from);
	cpuset_clear(&pick);
	cpuset_clear(&iso);
	return (rc);
}

/*
 * The shared CPUs a container of this pool runs on: the pool's free
 * sharable set, or when that is empty the nearest ancestor's, so that no
 * container is ever given an empty cpuset (R-POOL-3).
 */
void
supply_shared_cpus(const struct policy *P, const struct pool *p,
    struct cpuset *out)
{
	const struct pool	*a;

	for (a = p; a != NULL; a = a->parent)
		if (!cpuset_empty(&P->sup[a->id].sharable)) {
			cpuset_copy(out, &P->sup[a->id].sharable);
			return;
		}
	/* Nothing sharable anywhere: the reserved CPUs still run things. */
	cpuset_copy(out, &pool_tree_root(P->tree)->reserved);
}

/* Pool id's free sets changed: it gets a stamp no pool had before. */
void
supply_stamp(struct policy *P, int id)
{
	P->sup[id].gen = ++P->gen_clock;
}

/*
 * A number that changes whenever the set supply_shared_cpus gives p may
 * have: the newest stamp among p and the ancestors it falls back through
 * (those with nothing sharable, and the first with something). A claim
 * in one node changes its ancestors' sets but not its siblings', so the
 * containers of the siblings are not looked at again. Stamps come from
 * one clock and only grow, so any change on that path gives a value this
 * pool never had.
 */
unsigned long
supply_path_gen(const struct policy *P, const struct pool *p)
{
	unsigned long	newest = 0;

	for (; p != NULL; p = p->parent) {
		if (P->sup[p->id].gen > newest)
			newest = P->sup[p->id].gen;
		if (!cpuset_empty(&P->sup[p->id].sharable))
			break;
	}
	return (newest);
}
