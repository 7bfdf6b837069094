/*
 * cpumap.c owns the map of the machine: for each CPU its place in the
 * topology and what holds it (a claim, a container's exclusive CPUs,
 * isolated and free, reserved, a pool's shared CPUs and how many
 * containers run there, free, unmanaged, offline). It reads the policy's
 * grants and free supply and changes nothing.
 */
#include "autoconf.h"

#include <stdlib.h>

#include "cpumap.h"
#include "policy_priv.h"
#include "xmalloc.h"

enum cell_kind {
	CELL_NONE = 0,
	CELL_CLAIM,
	CELL_EXCLUSIVE,
	CELL_ISOLATED,
	CELL_RESERVED,
	CELL_SHARED,
	CELL_FREE,
	CELL_UNMANAGED,
	CELL_OFFLINE
};

/* By enum cell_kind. */
static const char *const kind_names[] = { "none", "claim", "exclusive",
    "isolated", "reserved", "shared", "free", "unmanaged", "offline" };

struct cell {
	enum cell_kind		 kind;
	const char		*holder;	/* claim UID or container id */
	const struct pool	*pool;
	int			 containers;	/* running on it */
};

struct cpumap {
	const struct policy	*P;
	int			 ncells;	/* highest CPU id + 1 */
	struct cell		*cells;		/* by CPU id */
	int			*nshared;	/* by pool id: containers on
						   its shared CPUs */
	int			*nreserved;	/* by pool id: on its reserved */
};

static struct cell *
cell_of(struct cpumap *m, int cpu)
{
	return (cpu >= 0 && cpu < m->ncells ? &m->cells[cpu] : NULL);
}

/* A claim's CPUs are its own; the claim is in P->claims. */
static void
mark_claim(const char *key, void *value, void *arg)
{
	struct cpumap	*m = arg;
	struct grant	*g = value;
	struct cell	*c;
	int		 cpu;

	(void)key;
	CPUSET_FOREACH(cpu, &g->exclusive) {
		if ((c = cell_of(m, cpu)) == NULL)
			continue;
		c->kind = CELL_CLAIM;
		c->holder = g->key;
		c->pool = g->pool;
	}
}

/*
 * One container: its exclusive CPUs are marked, and it is counted once in
 * its pool, on the shared or the reserved side, as policy_pin() pins it.
 */
static void
mark_container(const char *key, void *value, void *arg)
{
	struct cpumap	*m = arg;
	struct grant	*g = value;
	struct cell	*c;
	int		 cpu;

	(void)key;
	if (g->kind == GRANT_CLAIM_PINNED) {
		CPUSET_FOREACH(cpu, &g->exclusive)
			if ((c = cell_of(m, cpu)) != NULL)
				c->containers++;
		return;
	}
	if (g->pool == NULL)
		return;
	CPUSET_FOREACH(cpu, &g->exclusive) {
		if ((c = cell_of(m, cpu)) == NULL || c->kind == CELL_CLAIM)
			continue;
		c->kind = CELL_EXCLUSIVE;
		c->holder = g->key;
		c->pool = g->pool;
	}
	if (g->type == CPU_PRESERVE)
		return;
	if (g->type == CPU_RESERVED && !cpuset_empty(&g->pool->reserved))
		m->nreserved[g->pool->id]++;
	else if (cpuset_empty(&g->exclusive) || g->portion > 0)
		m->nshared[g->pool->id]++;
}

/* Adds each pool's count to the CPUs its containers run on. */
static void
count_pools(struct cpumap *m)
{
	const struct pool	*p;
	struct cpuset		 shared = CPUSET_INITIALIZER;
	struct cell		*c;
	int			 i, cpu;

	for (i = 0; i < pool_tree_count(m->P->tree); i++) {
		p = pool_tree_get(m->P->tree, i);
		if (m->nshared[i] > 0) {
			supply_shared_cpus(m->P, p, &shared);
			CPUSET_FOREACH(cpu, &shared)
				if ((c = cell_of(m, cpu)) != NULL)
					c->containers += m->nshared[i];
		}
		if (m->nreserved[i] > 0)
			CPUSET_FOREACH(cpu, &p->reserved)
				if ((c = cell_of(m, cpu)) != NULL)
					c->containers += m->nreserved[i];
	}
	cpuset_clear(&shared);
}

/*
 * The deepest pool each free sharable CPU is in: pool ids are given
 * children first, so the first pool found holding a CPU is the deepest.
 */
static void
name_shared(struct cpumap *m)
{
	const struct pool	*p;
	struct cell		*c;
	int			 i, cpu;

	for (i = 0; i < pool_tree_count(m->P->tree); i++) {
		p = pool_tree_get(m->P->tree, i);
		CPUSET_FOREACH(cpu, &m->P->sup[i].sharable)
			if ((c = cell_of(m, cpu)) != NULL && c->pool == NULL)
				c->pool = p;
	}
}

/* What no grant holds: by the static and free supply of the root. */
static void
classify_rest(struct cpumap *m)
{
	const struct topology	*t = m->P->topo;
	const struct pool	*root = pool_tree_root(m->P->tree);
	const struct topo_cpu	*tc;
	struct cell		*c;
	int			 cpu;

	for (cpu = 0; cpu < m->ncells; cpu++) {
		c = &m->cells[cpu];
		if ((tc = topology_cpu(t, cpu)) == NULL || c->kind != CELL_NONE)
			continue;
		if (!tc->online)
			c->kind = CELL_OFFLINE;
		else if (cpuset_has(&root->reserved, cpu))
			c->kind = CELL_RESERVED;
		else if (cpuset_has(&root->isolated, cpu))
			c->kind = CELL_ISOLATED;
		else if (cpuset_has(&m->P->sup[root->id].sharable, cpu))
			c->kind = c->containers > 0 ? CELL_SHARED : CELL_FREE;
		else
			c->kind = CELL_UNMANAGED;
	}
}

static void
cpumap_init(struct cpumap *m, const struct policy *P)
{
	int	id, n = pool_tree_count(P->tree);

	m->P = P;
	m->ncells = 0;
	for (id = 0; id <= CPUSET_MAX_ID; id++)
		if (topology_cpu(P->topo, id) != NULL)
			m->ncells = id + 1;
	m->cells = xcalloc(m->ncells > 0 ? (size_t)m->ncells : 1,
	    sizeof *m->cells);
	m->nshared = xcalloc((size_t)n, sizeof *m->nshared);
	m->nreserved = xcalloc((size_t)n, sizeof *m->nreserved);
}

static void
cpumap_clear(struct cpumap *m)
{
	free(m->cells);
	free(m->nshared);
	free(m->nreserved);
}

static json_t *
id_or_null(int id)
{
	return (id >= 0 ? json_integer(id) : json_null());
}

/* The CPU's place among its core's online threads, -1 when offline. */
static int
thread_of(const struct topology *t, const struct topo_cpu *tc)
{
	const struct topo_core	*core;
	int			 cpu, n = 0;

	if (tc->core < 0 || (core = topology_core(t, tc->core)) == NULL)
		return (-1);
	CPUSET_FOREACH(cpu, &core->threads) {
		if (cpu == tc->id)
			return (n);
		n++;
	}
	return (-1);
}

static json_t *
cell_json(const struct cpumap *m, const struct topo_cpu *tc,
    const struct cell *c)
{
	const struct topology	*t = m->P->topo;
	const struct topo_core	*core = NULL;
	json_t			*o;

	if (tc->core >= 0)
		core = topology_core(t, tc->core);
	o = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:s}", "cpu", tc->id,
	    "package", id_or_null(tc->package), "die", id_or_null(tc->die),
	    "node", id_or_null(tc->online ? tc->node : -1),
	    "core", id_or_null(core != NULL ? core->core_id : -1),
	    "thread", id_or_null(thread_of(t, tc)),
	    "kind", kind_names[c->kind]);
	if (o == NULL)
		return (NULL);
	if (c->kind == CELL_CLAIM)
		json_object_set_new(o, "claim", json_string(c->holder));
	if (c->kind == CELL_EXCLUSIVE) {
		json_object_set_new(o, "container", json_string(c->holder));
		json_object_set_new(o, "isolated", json_boolean(tc->isolated));
	}
	if (c->pool != NULL && c->kind != CELL_UNMANAGED)
		json_object_set_new(o, "pool", json_string(c->pool->name));
	if (c->kind == CELL_CLAIM || c->kind == CELL_RESERVED ||
	    c->kind == CELL_SHARED)
		json_object_set_new(o, "containers",
		    json_integer(c->containers));
	return (o);
}

json_t *
cpumap_json(const struct policy *P)
{
	struct cpumap		 m;
	const struct topo_cpu	*tc;
	json_t			*cpus, *o;
	int			 cpu;

	cpumap_init(&m, P);
	strmap_each(P->claims, mark_claim, &m);
	strmap_each(P->ctrs, mark_container, &m);
	count_pools(&m);
	name_shared(&m);
	classify_rest(&m);

	cpus = json_array();
	for (cpu = 0; cpu < m.ncells; cpu++) {
		if ((tc = topology_cpu(P->topo, cpu)) == NULL)
			continue;
		if ((o = cell_json(&m, tc, &m.cells[cpu])) == NULL ||
		    json_array_append_new(cpus, o) != 0) {
			json_decref(cpus);
			cpumap_clear(&m);
			return (NULL);
		}
	}
	cpumap_clear(&m);
	return (json_pack("{s:o}", "cpus", cpus));
}
