/*
 * nrtdoc.c owns the content of the node's NodeResourceTopology object
 * (anchor §8, protocols.md 7.4): one zone per pool in pool id order, which
 * is the tree's post-order, with the pool's CPU and memory as resources,
 * its CPU sets as attributes and, for NUMA node zones, the distances to
 * the other NUMA node zones as costs. What is available is read from the
 * free supply, so CPUs held by claims and exclusive grants are not.
 */
#include "autoconf.h"

#include <stdlib.h>

#include "nrtdoc.h"
#include "policy_priv.h"
#include "xmalloc.h"

/* Whole CPUs when exact ("4"), else milli-CPUs ("3500m"). */
static json_t *
nrtdoc_milli(long long milli)
{
	json_t	*j;
	char	*text;

	if (milli < 0)
		milli = 0;
	if (milli % 1000 == 0)
		xasprintf(&text, "%lld", milli / 1000);
	else
		xasprintf(&text, "%lldm", milli);
	j = json_string(text);
	free(text);
	return (j);
}

static json_t *
nrtdoc_bytes(unsigned long long bytes)
{
	json_t	*j;
	char	*text;

	xasprintf(&text, "%llu", bytes);
	j = json_string(text);
	free(text);
	return (j);
}

static void
nrtdoc_attr(json_t *a, const char *name, const struct cpuset *s)
{
	char	*text = cpuset_format(s);

	json_array_append_new(a, json_pack("{s:s, s:s}", "name", name,
	    "value", text));
	free(text);
}

static json_t *
nrtdoc_resource(const char *name, json_t *capacity, json_t *available)
{
	/*
	 * capacity (borrowed) is both capacity and allocatable: nothing is
	 * held back. available is stolen.
	 */
	return (json_pack("{s:s, s:O, s:O, s:o}", "name", name,
	    "capacity", capacity, "allocatable", capacity,
	    "available", available));
}

/* Kernel NUMA distances to every NUMA node zone, itself included. */
static json_t *
nrtdoc_costs(const struct policy *P, const struct pool *p)
{
	const struct pool	*q;
	json_t			*a;
	int			 i, d;

	a = json_array();
	for (i = 0; i < pool_tree_count(P->tree); i++) {
		q = pool_tree_get(P->tree, i);
		if (q->kind != POOL_NUMA)
			continue;
		if ((d = topology_node_distance(P->topo, p->domain,
		    q->domain)) < 0)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:i}", "name",
		    q->name, "value", d));
	}
	return (a);
}

static json_t *
nrtdoc_zone(const struct policy *P, const struct pool *p)
{
	const struct supply	*s = &P->sup[p->id];
	const struct topo_node	*node;
	struct cpuset		 cpus = CPUSET_INITIALIZER;
	unsigned long long	 mem = 0, avail;
	long long		 left;
	json_t			*z, *res, *attrs, *cap;
	int			 id;

	z = json_pack("{s:s, s:s}", "name", p->name, "type",
	    pool_kind_name(p->kind));
	if (p->parent != NULL)
		json_object_set_new(z, "parent", json_string(p->parent->name));
	if (p->kind == POOL_NUMA)
		json_object_set_new(z, "costs", nrtdoc_costs(P, p));

	res = json_array();
	/* Isolated CPUs are not for ordinary containers: not counted. */
	cpuset_copy(&cpus, &p->sharable);
	cpuset_or(&cpus, &p->reserved);
	cap = nrtdoc_milli(1000LL * cpuset_count(&cpus));
	json_array_append_new(res, nrtdoc_resource("cpu", cap,
	    nrtdoc_milli(supply_allocatable_shared(P, p))));
	json_decref(cap);
	CPUSET_FOREACH(id, &p->mems) {
		if ((node = topology_node_by_id(P->topo, id)) != NULL)
			mem += node->memory;
	}
	/* Available: what no container whose memory zone lies within
	 * the pool's nodes holds (libmem's zone free, as Go reports it);
	 * all of it when memory is not accounted. */
	if (P->mem != NULL && (left = memalloc_zone_free(P->mem,
	    policy_mem_mask(P, &p->mems))) < (long long)mem)
		avail = left < 0 ? 0 : (unsigned long long)left;
	else
		avail = mem;
	cap = nrtdoc_bytes(mem);
	json_array_append_new(res, nrtdoc_resource("memory", cap,
	    nrtdoc_bytes(avail)));
	json_decref(cap);
	json_object_set_new(z, "resources", res);

	attrs = json_array();
	nrtdoc_attr(attrs, "memory set", &p->mems);
	nrtdoc_attr(attrs, "shared cpuset", &s->sharable);
	if (!cpuset_empty(&p->reserved))
		nrtdoc_attr(attrs, "reserved cpuset", &p->reserved);
	if (!cpuset_empty(&s->isolated))
		nrtdoc_attr(attrs, "isolated cpuset", &p->isolated);
	json_object_set_new(z, "attributes", attrs);

	cpuset_clear(&cpus);
	return (z);
}

json_t *
nrtdoc_build(const struct policy *P)
{
	json_t	*zones;
	int	 i;

	zones = json_array();
	for (i = 0; i < pool_tree_count(P->tree); i++)
		json_array_append_new(zones, nrtdoc_zone(P,
		    pool_tree_get(P->tree, i)));
	return (json_pack("{s:[{s:s, s:s}], s:o}", "attributes",
	    "name", "TopologyPolicy", "value", "topology-aware",
	    "zones", zones));
}
