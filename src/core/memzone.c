/*
 * The memory zone a pool offers a request. It follows the Go policy's
 * getMemOffer and libmem's initial zone (findInitialZone, defaultExpand)
 * with no memory accounted: the pool's nodes of the wanted types; when a
 * wanted type is missing, the nodes of that type nearest to the zone are
 * added; the zone then keeps only nodes of wanted types, unless none is.
 * It decides pool scores only: what a container is pinned to is not
 * changed by it.
 */
#include "autoconf.h"

#include <limits.h>
#include <stddef.h>

#include "memzone.h"

unsigned
memzone_types(const struct topology *t, const struct cpuset *nodes)
{
	const struct topo_node	*n;
	unsigned		 types = 0;
	int			 id;

	CPUSET_FOREACH(id, nodes) {
		if ((n = topology_node_by_id(t, id)) != NULL && n->memory > 0)
			types |= 1u << n->type;
	}
	return (types);
}

/* The nodes of a type with memory, not in zone. */
static void
nodes_of_type(const struct topology *t, int type, const struct cpuset *zone,
    struct cpuset *out)
{
	const struct topo_node	*n;
	int			 i;

	cpuset_zero(out);
	for (i = 0; i < topology_nnodes(t); i++) {
		n = topology_node(t, i);
		if (n->memory > 0 && (int)n->type == type &&
		    !cpuset_has(zone, n->id))
			cpuset_add(out, n->id);
	}
}

/*
 * The nodes of one type close to a zone (newCloseNodesOfType): for each
 * zone node in turn, its nearest nodes of the type; a node's set counts
 * when it is no farther than the nearest found so far. Sets found earlier
 * at a greater distance stay, as libmem keeps them.
 */
static void
close_nodes(const struct topology *t, const struct cpuset *zone, int type,
    struct cpuset *out)
{
	struct cpuset	 cand = CPUSET_INITIALIZER;
	int		 id, c, d, best, max = INT_MAX;

	cpuset_zero(out);
	nodes_of_type(t, type, zone, &cand);
	if (cpuset_empty(&cand)) {
		cpuset_clear(&cand);
		return;
	}
	CPUSET_FOREACH(id, zone) {
		best = INT_MAX;
		CPUSET_FOREACH(c, &cand) {
			d = topology_node_distance(t, id, c);
			if (d < best)
				best = d;
		}
		if (best > max)
			continue;
		max = best;
		CPUSET_FOREACH(c, &cand) {
			if (topology_node_distance(t, id, c) == best)
				cpuset_add(out, c);
		}
	}
	cpuset_clear(&cand);
}

void
memzone_offer(const struct topology *t, const struct pool *p, unsigned types,
    struct cpuset *out)
{
	struct cpuset	 add = CPUSET_INITIALIZER, keep = CPUSET_INITIALIZER;
	struct cpuset	 more = CPUSET_INITIALIZER;
	unsigned	 miss;
	int		 ty;

	cpuset_zero(out);
	for (ty = MEM_TYPE_DRAM; ty <= MEM_TYPE_HBM; ty++)
		if (types == 0 || (types & 1u << ty))
			cpuset_or(out, &p->mems_type[ty]);
	if (types == 0 || cpuset_empty(out))
		return;
	miss = types & ~memzone_types(t, out);
	for (ty = MEM_TYPE_DRAM; ty <= MEM_TYPE_HBM; ty++) {
		if (!(miss & 1u << ty))
			continue;
		close_nodes(t, out, ty, &more);
		cpuset_or(&add, &more);
	}
	cpuset_or(out, &add);
	/* Only nodes of wanted types, when there are any. */
	CPUSET_FOREACH(ty, out) {
		const struct topo_node *n = topology_node_by_id(t, ty);

		if (n != NULL && (types & 1u << n->type))
			cpuset_add(&keep, ty);
	}
	if (!cpuset_empty(&keep))
		cpuset_copy(out, &keep);
	cpuset_clear(&add);
	cpuset_clear(&keep);
	cpuset_clear(&more);
}
