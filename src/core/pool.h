/*
 * The pool tree (SPEC R-POOL-1, anchor §1): a virtual root over several
 * sockets, socket pools, die pools, NUMA node pools and L3 cache pools,
 * built from the topology and the configured allowed, isolated and
 * reserved CPUs. Pool ids are assigned in post-order (children before
 * their parent), as the Go policy does, and serve as the last tie-break.
 *
 * Each pool carries its static supply: the CPUs it covers split into
 * isolated, sharable and reserved, and the memory nodes it may pin by type.
 * What is free at a moment is the policy's business, not the tree's.
 */
#ifndef TOPOAWARE_POOL_H
#define TOPOAWARE_POOL_H

#include "cpuset.h"
#include "topology.h"

enum pool_kind {
	POOL_VIRTUAL = 0,	/* the root over several sockets */
	POOL_SOCKET,
	POOL_DIE,
	POOL_NUMA,
	POOL_L3
};

struct pool {
	int		 id;		/* post-order */
	char		*name;		/* "socket #0", "NUMA node #2", ... */
	enum pool_kind	 kind;
	int		 depth;		/* root 0 */
	int		 domain;	/* package, die, node or cache id */
	struct pool	*parent;	/* NULL for the root */
	int		 nchildren;
	struct pool	**children;	/* in topology order */

	struct cpuset	 cpus;		/* online CPUs the pool covers */
	struct cpuset	 isolated;	/* static supply: allowed ∩ isolated */
	struct cpuset	 sharable;	/* allowed − isolated − reserved */
	struct cpuset	 reserved;	/* allowed ∩ reserved */
	int		 nreserved;	/* its count */

	struct cpuset	 mems;		/* memory node ids, all types */
	struct cpuset	 mems_type[3];	/* by enum mem_type */
};

struct pool_tree;

/*
 * Build the tree. allowed and reserved are the resolved sets of
 * config_resolve_cpus(); isolated comes from the topology. Fails only on a
 * topology the tree cannot stand on (an asymmetric distance matrix).
 */
int		 pool_tree_new(const struct topology *, const struct cpuset *,
		     const struct cpuset *, struct pool_tree **, char **);
void		 pool_tree_free(struct pool_tree *);

/* Pools a per-event array by pool id holds on the stack (xscratch): the
 * trees of real machines have a few dozen at most. */
#define POOLS_ON_STACK	64

struct pool	*pool_tree_root(const struct pool_tree *);
int		 pool_tree_count(const struct pool_tree *);
struct pool	*pool_tree_get(const struct pool_tree *, int);	/* by id */
struct pool	*pool_tree_find(const struct pool_tree *, const char *);
int		 pool_tree_depth(const struct pool_tree *);	/* maximum */
const struct topology *pool_tree_topology(const struct pool_tree *);
const struct cpuset *pool_tree_allowed(const struct pool_tree *);
const struct cpuset *pool_tree_reserved(const struct pool_tree *);

/*
 * The tree's pool names by id, shared: what names the pools of a decision
 * after a reload has replaced its tree (explain.c). pool_tree_names gives
 * a reference, dropped with pool_names_unref; an id out of range is "?".
 */
struct pool_names;
struct pool_names *pool_tree_names(const struct pool_tree *);
const char	*pool_names_get(const struct pool_names *, int);
void		 pool_names_unref(struct pool_names *);

/* Static grantable CPUs of a pool: (isolated ∪ sharable) − reserved. */
void		 pool_grantable(const struct pool *, struct cpuset *);

/*
 * The deepest pool whose grantable set holds all of cpus (anchor §1.3):
 * from the root, descend into the first child that holds them all. An
 * empty set gives the root.
 */
struct pool	*pool_tree_for_cpus(const struct pool_tree *,
		     const struct cpuset *);

int		 pool_is_ancestor(const struct pool *, const struct pool *);
const char	*pool_kind_name(enum pool_kind);

#endif
