/*
 * view.c owns the JSON shapes of the topology, the pool tree and the DRA
 * devices. Keys are fixed here once so the simulator, the admin socket and
 * the tests agree on them.
 */
#include "autoconf.h"

#include <stdlib.h>

#include "view.h"

json_t *
view_cpuset(const struct cpuset *s)
{
	char	*text = cpuset_format(s);
	json_t	*j = json_string(text);

	free(text);
	return (j);
}

json_t *
view_topology(const struct topology *t)
{
	const struct topo_package	*pkg;
	const struct topo_node		*node;
	json_t				*o, *pkgs, *nodes, *dist, *jn;
	int				 i, j;

	pkgs = json_array();
	for (i = 0; i < topology_npackages(t); i++) {
		pkg = topology_package(t, i);
		json_array_append_new(pkgs, json_pack("{s:i, s:o}", "id",
		    pkg->id, "cpus", view_cpuset(&pkg->cpus)));
	}
	nodes = json_array();
	for (i = 0; i < topology_nnodes(t); i++) {
		node = topology_node(t, i);
		dist = json_array();
		for (j = 0; j < topology_nnodes(t); j++)
			json_array_append_new(dist, json_integer(node->distance[j]));
		jn = json_pack("{s:i, s:o, s:I, s:o}", "id", node->id, "cpus",
		    view_cpuset(&node->cpus), "memory", (json_int_t)node->memory,
		    "distances", dist);
		json_array_append_new(nodes, jn);
	}
	o = json_pack("{s:o, s:o, s:o, s:o, s:i, s:i}",
	    "online", view_cpuset(topology_online(t)),
	    "isolated", view_cpuset(topology_isolated(t)),
	    "packages", pkgs, "nodes", nodes,
	    "cores", topology_ncores(t),
	    "threadsPerCore", topology_threads_per_core(t));
	return (o);
}

json_t *
view_pools(const struct pool_tree *pt)
{
	const struct pool	*p;
	json_t			*a, *o;
	int			 i;

	a = json_array();
	for (i = 0; i < pool_tree_count(pt); i++) {
		p = pool_tree_get(pt, i);
		o = json_pack("{s:i, s:s, s:o, s:i, s:o, s:o, s:o, s:o}",
		    "id", p->id, "name", p->name,
		    "parent", p->parent ? json_integer(p->parent->id) :
		    json_null(), "depth", p->depth,
		    "cpus", view_cpuset(&p->cpus),
		    "isolated", view_cpuset(&p->isolated),
		    "sharable", view_cpuset(&p->sharable),
		    "reserved", view_cpuset(&p->reserved));
		json_object_set_new(o, "kind", json_string(pool_kind_name(p->kind)));
		json_object_set_new(o, "mems", view_cpuset(&p->mems));
		json_array_append_new(a, o);
	}
	return (a);
}

json_t *
view_devices(const struct dradev *devs, int n)
{
	json_t	*a;
	int	 i;

	a = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:b, s:i}",
		    "name", devs[i].name, "numaNode", devs[i].node,
		    "socketID", devs[i].socket, "smtEnabled", devs[i].smt,
		    "cpu", devs[i].cpus));
	return (a);
}
