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

/* The steps a pick took its CPUs by (cpualloc_last_steps): the flags
 * above, and these two. */
#define CPUALLOC_IDLE_THREADS	0x10	/* single threads, last */
#define CPUALLOC_WHOLE_SET	0x20	/* all of the set, or none asked */

/*
 * Take cnt CPUs out of *from into *result (which is overwritten).
 * On success returns 0, *result holds exactly cnt CPUs and they are
 * removed from *from. When from holds fewer than cnt CPUs, or the
 * CPUs cannot be picked, returns -ENOSPC with *cause (caller frees) and
 * changes neither set (upstream returns an empty set and no error). A
 * negative cnt or an unknown priority is -EINVAL. cnt 0 succeeds with an
 * empty result; cnt == |from| returns all of from. cause may be NULL.
 *
 * cpualloc_take() derives what it needs from the topology on every call;
 * it is cpualloc_new(), cpualloc_pick() and cpualloc_free() in one.
 */
int	cpualloc_take(const struct topology *, struct cpuset *from, int cnt,
	    enum cpu_prio prefer, unsigned flags, struct cpuset *result,
	    char **cause);

/*
 * An allocator for one topology, as upstream's NewCPUAllocator: it keeps
 * what can be derived once (cores as thread lists, cache groups) and the
 * scratch of a pick, so cpualloc_pick() is the fast path on big machines.
 * It reads priorities, core kinds and clusters from the topology at each
 * pick, so the override hooks need no new allocator; after another
 * topology_finish() it must be made again. The topology must outlive it.
 * One pick at a time (the scratch is shared); picks never call back.
 */
struct cpualloc;

struct cpualloc	*cpualloc_new(const struct topology *);
void		 cpualloc_free(struct cpualloc *);
int		 cpualloc_pick(struct cpualloc *, struct cpuset *from,
		     int cnt, enum cpu_prio prefer, unsigned flags,
		     struct cpuset *result, char **cause);
/* The steps (CPUALLOC_* bits) the last successful pick took CPUs by. */
unsigned	 cpualloc_last_steps(const struct cpualloc *);
/* A step's name, for explanations: "idle cores". */
const char	*cpualloc_step_name(unsigned);

#endif
