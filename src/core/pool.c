/*
 * pool.c owns the pool tree: building it from the topology (anchor §1.1),
 * numbering it in post-order, each pool's static CPU supply and memory
 * nodes (§1.2), and finding the deepest pool that holds a set of CPUs
 * (§1.3).
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "xmalloc.h"

/* The pools' names by id, kept by whoever must still name them once the
 * tree is gone (pool.h). */
struct pool_names {
	int	 refs;
	int	 n;
	char	*name[];
};

struct pool_tree {
	const struct topology	*topo;
	struct pool_names	*names;
	struct cpuset		 allowed;
	struct cpuset		 reserved;
	struct pool		*root;
	int			 npools;
	struct pool		**pools;	/* by id */
	int			 depth;
};

static const char *pool_kind_names[] = {
	"virtual node", "socket", "die", "numa node", "L3 cache"
};

const char *
pool_kind_name(enum pool_kind kind)
{
	return (pool_kind_names[kind]);
}

static struct pool *
pool_new(struct pool *parent, enum pool_kind kind, int domain,
    const struct cpuset *cpus, const char *name)
{
	struct pool	*p;
	int		 i;

	p = xcalloc(1, sizeof *p);
	p->name = xstrdup(name);
	p->kind = kind;
	p->domain = domain;
	p->parent = parent;
	p->depth = parent ? parent->depth + 1 : 0;
	cpuset_init(&p->cpus);
	cpuset_init(&p->isolated);
	cpuset_init(&p->sharable);
	cpuset_init(&p->reserved);
	cpuset_init(&p->mems);
	for (i = 0; i < 3; i++)
		cpuset_init(&p->mems_type[i]);
	cpuset_copy(&p->cpus, cpus);
	if (parent != NULL) {
		parent->children = xreallocarray(parent->children,
		    parent->nchildren + 1, sizeof *parent->children);
		parent->children[parent->nchildren++] = p;
	}
	return (p);
}

static void
pool_free(struct pool *p)
{
	int	i;

	for (i = 0; i < p->nchildren; i++)
		pool_free(p->children[i]);
	free(p->children);
	free(p->name);
	cpuset_clear(&p->cpus);
	cpuset_clear(&p->isolated);
	cpuset_clear(&p->sharable);
	cpuset_clear(&p->reserved);
	cpuset_clear(&p->mems);
	for (i = 0; i < 3; i++)
		cpuset_clear(&p->mems_type[i]);
	free(p);
}

/* The L3 caches lying wholly inside cpus; returns how many, in *idx. */
static int
l3_caches_within(const struct topology *t, const struct cpuset *cpus,
    int **idx)
{
	const struct topo_cache	*c;
	int			 i, n = 0;

	*idx = xcalloc((size_t)topology_ncaches(t) + 1, sizeof **idx);
	for (i = 0; i < topology_ncaches(t); i++) {
		c = topology_cache(t, i);
		if (c->level != 3 || c->type == 'I' || cpuset_empty(&c->cpus))
			continue;
		if (cpuset_subset(&c->cpus, cpus))
			(*idx)[n++] = i;
	}
	return (n);
}

/* Adds L3 pools under p when more than one L3 cache lies inside it. */
static void
add_l3_pools(const struct topology *t, struct pool *p)
{
	const struct topo_cache	*c;
	struct cpuset		 cpus = CPUSET_INITIALIZER;
	char			*name;
	int			*idx, n, i;

	n = l3_caches_within(t, &p->cpus, &idx);
	for (i = 0; n > 1 && i < n; i++) {
		c = topology_cache(t, idx[i]);
		cpuset_copy(&cpus, &c->cpus);
		cpuset_and(&cpus, &p->cpus);
		xasprintf(&name, "%s/L3 cache #%d", p->name,
		    c->id >= 0 ? c->id : idx[i]);
		pool_new(p, POOL_L3, c->id, &cpus, name);
		free(name);
	}
	cpuset_clear(&cpus);
	free(idx);
}

/* NUMA pools for the nodes with CPUs in p; memory-less nodes fold into p. */
static void
add_numa_pools(const struct topology *t, struct pool *p,
    const struct cpuset *nodes)
{
	const struct topo_node	*node;
	struct pool		*child;
	char			*name;
	int			 id;

	CPUSET_FOREACH(id, nodes) {
		node = topology_node_by_id(t, id);
		if (node == NULL || node->memory == 0 ||
		    cpuset_empty(&node->cpus))
			continue;
		xasprintf(&name, "NUMA node #%d", id);
		child = pool_new(p, POOL_NUMA, id, &node->cpus, name);
		free(name);
		add_l3_pools(t, child);
	}
}

static void
add_socket_pool(const struct topology *t, struct pool *parent,
    const struct topo_package *pkg, struct pool **out)
{
	const struct topo_die	*die;
	struct pool		*p, *dp;
	char			*name;
	int			 i, dies = 0;

	xasprintf(&name, "socket #%d", pkg->id);
	p = pool_new(parent, POOL_SOCKET, pkg->id, &pkg->cpus, name);
	free(name);
	*out = p;

	/* A die that is a single cluster adds nothing over its package. */
	if (pkg->ndies > 1)
		for (i = 0; i < pkg->ndies; i++)
			if (pkg->dies[i].nclusters > 1)
				dies = 1;
	if (!dies) {
		if (cpuset_count(&pkg->nodes) > 1)
			add_numa_pools(t, p, &pkg->nodes);
		else
			add_l3_pools(t, p);
		return;
	}
	for (i = 0; i < pkg->ndies; i++) {
		die = &pkg->dies[i];
		xasprintf(&name, "die #%d/%d", pkg->id, die->id);
		dp = pool_new(p, POOL_DIE, die->id, &die->cpus, name);
		free(name);
		if (cpuset_count(&die->nodes) > 1)
			add_numa_pools(t, dp, &die->nodes);
		else
			add_l3_pools(t, dp);
	}
}

static void
number_post_order(struct pool_tree *pt, struct pool *p)
{
	int	i;

	for (i = 0; i < p->nchildren; i++)
		number_post_order(pt, p->children[i]);
	p->id = pt->npools;
	pt->pools = xreallocarray(pt->pools, pt->npools + 1, sizeof *pt->pools);
	pt->pools[pt->npools++] = p;
	if (p->depth > pt->depth)
		pt->depth = p->depth;
}

/* The CPU-bearing DRAM node nearest to a CPU-less node, -1 if none. */
static int
nearest_cpu_node(const struct topology *t, const struct topo_node *n)
{
	const struct topo_node	*m;
	int			 i, best = -1, bestd = 0, d;

	for (i = 0; i < topology_nnodes(t); i++) {
		m = topology_node(t, i);
		if (cpuset_empty(&m->cpus) || m->type != MEM_TYPE_DRAM)
			continue;
		d = topology_node_distance(t, n->id, m->id);
		if (best < 0 || d < bestd) {
			best = m->id;
			bestd = d;
		}
	}
	return (best);
}

/*
 * Memory of a pool (§1.2): the root has every node with memory; any other
 * pool the nodes with CPUs in it, plus CPU-less PMEM and HBM nodes whose
 * nearest CPU node is one of them. A pool left without memory (its nodes
 * have none) uses its parent's, so a container is never pinned to nothing.
 */
static void
set_pool_mems(const struct topology *t, struct pool *p)
{
	const struct topo_node	*n;
	int			 i, near;

	cpuset_zero(&p->mems);
	for (i = 0; i < topology_nnodes(t); i++) {
		n = topology_node(t, i);
		if (n->memory == 0)
			continue;
		if (p->parent == NULL)
			cpuset_add(&p->mems, n->id);
		else if (!cpuset_empty(&n->cpus)) {
			if (cpuset_intersects(&n->cpus, &p->cpus))
				cpuset_add(&p->mems, n->id);
		} else if ((near = nearest_cpu_node(t, n)) >= 0) {
			const struct topo_node *nn = topology_node_by_id(t, near);

			if (cpuset_intersects(&nn->cpus, &p->cpus))
				cpuset_add(&p->mems, n->id);
		}
	}
	if (cpuset_empty(&p->mems) && p->parent != NULL)
		cpuset_copy(&p->mems, &p->parent->mems);
	for (i = 0; i < 3; i++)
		cpuset_zero(&p->mems_type[i]);
	CPUSET_FOREACH(i, &p->mems) {
		n = topology_node_by_id(t, i);
		cpuset_add(&p->mems_type[n->type], i);
	}
	for (i = 0; i < p->nchildren; i++)
		set_pool_mems(t, p->children[i]);
}

static void
set_pool_supply(struct pool_tree *pt, struct pool *p)
{
	const struct cpuset	*isolated = topology_isolated(pt->topo);
	struct cpuset		 allowed = CPUSET_INITIALIZER;
	int			 i;

	cpuset_copy(&allowed, &p->cpus);
	cpuset_and(&allowed, &pt->allowed);
	cpuset_copy(&p->isolated, &allowed);
	cpuset_and(&p->isolated, isolated);
	cpuset_copy(&p->reserved, &allowed);
	cpuset_and(&p->reserved, &pt->reserved);
	p->nreserved = cpuset_count(&p->reserved);
	cpuset_copy(&p->sharable, &allowed);
	cpuset_andnot(&p->sharable, &p->isolated);
	cpuset_andnot(&p->sharable, &p->reserved);
	cpuset_clear(&allowed);
	for (i = 0; i < p->nchildren; i++)
		set_pool_supply(pt, p->children[i]);
}

static int
check_distances(const struct topology *t, char **cause)
{
	const struct topo_node	*a, *b;
	int			 i, j;

	for (i = 0; i < topology_nnodes(t); i++) {
		a = topology_node(t, i);
		for (j = 0; j < i; j++) {
			b = topology_node(t, j);
			if (topology_node_distance(t, a->id, b->id) !=
			    topology_node_distance(t, b->id, a->id)) {
				xasprintf(cause, "NUMA distances of nodes %d "
				    "and %d are not symmetric", a->id, b->id);
				return (-EINVAL);
			}
		}
	}
	return (0);
}

/* One block: the pointers, then the names they point to. */
static struct pool_names *
names_new(const struct pool_tree *pt)
{
	struct pool_names	*pn;
	size_t			 len = 0, at;
	char			*text;
	int			 i;

	for (i = 0; i < pt->npools; i++)
		len += strlen(pt->pools[i]->name) + 1;
	pn = xmalloc(sizeof *pn + (size_t)pt->npools * sizeof pn->name[0] +
	    len);
	pn->refs = 1;
	pn->n = pt->npools;
	text = (char *)&pn->name[pt->npools];
	for (i = 0, at = 0; i < pt->npools; i++) {
		pn->name[i] = text + at;
		len = strlen(pt->pools[i]->name) + 1;
		memcpy(text + at, pt->pools[i]->name, len);
		at += len;
	}
	return (pn);
}

struct pool_names *
pool_tree_names(const struct pool_tree *pt)
{
	pt->names->refs++;
	return (pt->names);
}

const char *
pool_names_get(const struct pool_names *pn, int id)
{
	return (id >= 0 && id < pn->n ? pn->name[id] : "?");
}

void
pool_names_unref(struct pool_names *pn)
{
	if (pn != NULL && --pn->refs == 0)
		free(pn);
}

int
pool_tree_new(const struct topology *t, const struct cpuset *allowed,
    const struct cpuset *reserved, struct pool_tree **out, char **cause)
{
	struct pool_tree		*pt;
	const struct topo_package	*pkg;
	struct pool			*sock;
	int				 i, rc;

	*out = NULL;
	if ((rc = check_distances(t, cause)) != 0)
		return (rc);
	if (topology_npackages(t) == 0) {
		xasprintf(cause, "the machine has no online CPU");
		return (-EINVAL);
	}
	pt = xcalloc(1, sizeof *pt);
	pt->topo = t;
	cpuset_init(&pt->allowed);
	cpuset_init(&pt->reserved);
	cpuset_copy(&pt->allowed, allowed);
	cpuset_and(&pt->allowed, topology_online(t));
	cpuset_copy(&pt->reserved, reserved);
	cpuset_and(&pt->reserved, &pt->allowed);

	if (topology_npackages(t) > 1) {
		pt->root = pool_new(NULL, POOL_VIRTUAL, -1, topology_online(t),
		    "root");
		for (i = 0; i < topology_npackages(t); i++) {
			pkg = topology_package(t, i);
			add_socket_pool(t, pt->root, pkg, &sock);
		}
	} else
		add_socket_pool(t, NULL, topology_package(t, 0), &pt->root);

	number_post_order(pt, pt->root);
	set_pool_supply(pt, pt->root);
	set_pool_mems(t, pt->root);
	pt->names = names_new(pt);
	*out = pt;
	return (0);
}

void
pool_tree_free(struct pool_tree *pt)
{
	if (pt == NULL)
		return;
	pool_names_unref(pt->names);
	pool_free(pt->root);
	free(pt->pools);
	cpuset_clear(&pt->allowed);
	cpuset_clear(&pt->reserved);
	free(pt);
}

struct pool *
pool_tree_root(const struct pool_tree *pt)
{
	return (pt->root);
}

int
pool_tree_count(const struct pool_tree *pt)
{
	return (pt->npools);
}

struct pool *
pool_tree_get(const struct pool_tree *pt, int id)
{
	if (id < 0 || id >= pt->npools)
		return (NULL);
	return (pt->pools[id]);
}

struct pool *
pool_tree_find(const struct pool_tree *pt, const char *name)
{
	int	i;

	for (i = 0; i < pt->npools; i++)
		if (strcmp(pt->pools[i]->name, name) == 0)
			return (pt->pools[i]);
	return (NULL);
}

int
pool_tree_depth(const struct pool_tree *pt)
{
	return (pt->depth);
}

const struct topology *
pool_tree_topology(const struct pool_tree *pt)
{
	return (pt->topo);
}

const struct cpuset *
pool_tree_allowed(const struct pool_tree *pt)
{
	return (&pt->allowed);
}

const struct cpuset *
pool_tree_reserved(const struct pool_tree *pt)
{
	return (&pt->reserved);
}

void
pool_grantable(const struct pool *p, struct cpuset *out)
{
	cpuset_copy(out, &p->isolated);
	cpuset_or(out, &p->sharable);
	cpuset_andnot(out, &p->reserved);
}

struct pool *
pool_tree_for_cpus(const struct pool_tree *pt, const struct cpuset *cpus)
{
	struct pool	*p = pt->root, *child;
	struct cpuset	 g = CPUSET_INITIALIZER;
	int		 i;

	if (cpuset_empty(cpus))
		return (p);
	for (;;) {
		child = NULL;
		for (i = 0; i < p->nchildren && child == NULL; i++) {
			pool_grantable(p->children[i], &g);
			if (cpuset_subset(cpus, &g))
				child = p->children[i];
		}
		if (child == NULL)
			break;
		p = child;
	}
	cpuset_clear(&g);
	return (p);
}

int
pool_is_ancestor(const struct pool *a, const struct pool *p)
{
	for (p = p->parent; p != NULL; p = p->parent)
		if (p == a)
			return (1);
	return (0);
}
