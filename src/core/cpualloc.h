/*
 * The CPU allocator: picks a number of CPUs out of a set so that they fit
 * the topology (idle packages, clusters on hybrid machines, cache groups,
 * idle cores, then single threads), preferring CPUs of a priority.
 */
#ifndef TOPOAWARE_CPUALLOC_H
#define TOPOAWARE_CPUALLOC_H

#include "cpuset.h"
#include "topology.h"

#define CPUALLOC_IDLE_PACKAGES	0x1
#define CPUALLOC_IDLE_CLUSTERS	0x2
#define CPUALLOC_CACHE_GROUPS	0x4
#define CPUALLOC_IDLE_CORES	0x8
#define CPUALLOC_ALL		0xf

/*
 * Take cnt CPUs out of *from into *result (which is overwritten).
 * On success returns 0, *result holds exactly cnt CPUs and they are
 * removed from *from. When from holds fewer than cnt CPUs, or the
 * CPUs cannot be picked, returns -ENOSPC with *cause (caller frees) and
 * changes neither set. cnt 0 succeeds with an empty result.
 */
int	cpualloc_take(const struct topology *, struct cpuset *from, int cnt,
	    enum cpu_prio prefer, unsigned flags, struct cpuset *result,
	    char **cause);

#endif
