/*
 * The DRA devices we publish (SPEC R-SLICE, anchor §9.2): one per NUMA node
 * whose CPUs meet the root pool's static grantable set, named
 * cpudevnuma%03d, offering that many CPUs as consumable capacity.
 */
#ifndef TOPOAWARE_DRADEV_H
#define TOPOAWARE_DRADEV_H

#include "pool.h"

#define DRADEV_NAME_MAX	32

struct dradev {
	char		name[DRADEV_NAME_MAX];	/* cpudevnuma003 */
	int		node;			/* NUMA node id */
	int		socket;			/* package id */
	int		smt;			/* threads per core > 1 */
	int		cpus;			/* grantable CPUs of the node */
	struct cpuset	grantable;		/* which ones */
};

/* The devices of a tree, ascending node id (caller frees with
 * dradev_free_list). Never fails; a machine with nothing to offer has none. */
int	dradev_list(const struct pool_tree *, struct dradev **);
void	dradev_free_list(struct dradev *, int);

/* The node id a device name stands for, or -1 unless the name is exactly
 * what dradev_list would write for it. */
int	dradev_parse_name(const char *);

/* 1 when two lists describe the same devices (for republishing). */
int	dradev_equal(const struct dradev *, int, const struct dradev *, int);

#endif
