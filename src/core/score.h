/*
 * What pool scoring computes for one pool (anchor §2.3): policy.c fills
 * it for every pool and compares two at a time; explain.c keeps it for
 * the pools a placement weighed.
 */
#ifndef TOPOAWARE_SCORE_H
#define TOPOAWARE_SCORE_H

#include "topology.h"

struct score {
	int	isolated;
	int	shared;
	int	reserved;
	int	colocated;
	int	prio[CPU_PRIO_COUNT];
	double	affinity;
	int	mems;		/* memory nodes it would offer */
	int	mem_match;	/* and they hold every wanted type */
	int	mem_own;	/* the pool's own nodes hold them */
	int	burst;		/* shared milli-CPU it can grant now */
	long long mem_cap;	/* bytes its nodes of the types hold */
};

#endif
