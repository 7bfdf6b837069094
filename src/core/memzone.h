/*
 * The memory zone a pool offers a request (the Go policy's memory offer,
 * as its libmem finds it): the pool's nodes of the wanted types, widened
 * once to the nearest nodes of any wanted type the pool lacks.
 */
#ifndef TOPOAWARE_MEMZONE_H
#define TOPOAWARE_MEMZONE_H

#include "cpuset.h"
#include "pool.h"
#include "topology.h"

#define MEM_TYPES_ALL	(1u << MEM_TYPE_DRAM | 1u << MEM_TYPE_PMEM | \
			 1u << MEM_TYPE_HBM)

/* The types of memory the nodes of a set hold (1 << enum mem_type). */
unsigned	memzone_types(const struct topology *, const struct cpuset *);

/*
 * Fill out with the zone pool p offers for memory of types (a mask of
 * 1 << enum mem_type; 0 is every type the pool has, as for preserved
 * memory). Nothing is accounted yet, so an offer never fails for want of
 * free memory and never widens past the types.
 */
void		memzone_offer(const struct topology *, const struct pool *,
		    unsigned types, struct cpuset *out);

#endif
