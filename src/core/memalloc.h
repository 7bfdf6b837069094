/*
 * Memory accounting by zones, with the semantics of the Go policy's
 * libmem (pkg/resmgr/lib/memory of containers/nri-plugins): nodes with a
 * type, a capacity and a distance row; requests of a size, an affinity
 * (the nodes to start from), preferred or strict types and a priority;
 * each request is assigned a zone (a set of nodes). A zone is
 * overcommitted when the sizes of the requests whose zones lie inside it
 * exceed its capacity; an allocation then moves requests of lower
 * priority first out to wider zones, as libmem's default overcommit
 * handler does, and fails when that cannot resolve it.
 *
 * Nodes are named by their index in the allocator (0-63, the order they
 * were given in), so a zone is a 64-bit mask. Pure: no I/O, no clock.
 * Every change is recorded in a memalloc_log when one is given, so that
 * the caller can learn which requests moved and put everything back.
 */
#ifndef TOPOAWARE_MEMALLOC_H
#define TOPOAWARE_MEMALLOC_H

#include <stdint.h>

#include "topology.h"

#define MEMALLOC_MAX_NODES	64

typedef uint64_t memmask_t;	/* bit i: node index i */

/* Type masks are 1u << enum mem_type. */
#define MEMALLOC_TYPE_DRAM	(1u << MEM_TYPE_DRAM)
#define MEMALLOC_TYPE_PMEM	(1u << MEM_TYPE_PMEM)
#define MEMALLOC_TYPE_HBM	(1u << MEM_TYPE_HBM)

/* Larger is more reluctant to move (libmem's Priority values). */
enum memalloc_prio {
	MEMALLOC_BESTEFFORT = 0,
	MEMALLOC_BURSTABLE = 1 << 10,
	MEMALLOC_GUARANTEED = 1 << 14,
	MEMALLOC_PRESERVED = (1 << 15) - 2,
	MEMALLOC_RESERVATION = (1 << 15) - 1	/* never moved */
};

struct memalloc_node {
	int		 id;		/* the NUMA node id, for messages */
	enum mem_type	 type;
	long long	 capacity;	/* bytes; 0 for a node without memory */
	int		 normal;	/* has normal (not only movable) memory */
	const int	*distance;	/* by node index, one per node */
	int		 ndistance;	/* entries: the node count */
};

struct memalloc_req {
	const char		*id;		/* unique, copied */
	long long		 size;		/* bytes, >= 0 */
	memmask_t		 affinity;	/* non-empty */
	unsigned		 types;		/* 0: the affinity's types */
	int			 strict;	/* types are a must */
	enum memalloc_prio	 prio;
	unsigned long long	 seq;		/* age: smaller is older */
};

/*
 * What a change did, one entry per request in the order first touched:
 * the request as it was before (present 0 when it was not there) and its
 * zone after (0 when it is gone).
 */
struct memalloc_change {
	char		*id;
	int		 present;
	long long	 size;
	memmask_t	 zone;		/* before */
	memmask_t	 affinity;
	unsigned	 types;
	int		 strict;
	int		 prio;
	unsigned long long seq;
	memmask_t	 after;
};

struct memalloc_log {
	struct memalloc_change	*v;
	int			 n;
	int			 size;
};

struct memalloc;

/*
 * NULL with *err (caller frees) for more than 64 nodes, an unknown type
 * or a bad row: one not of a distance per node, or whose smallest
 * distance is not to the node itself alone.
 */
struct memalloc	*memalloc_new(const struct memalloc_node *, int, char **err);
void		 memalloc_free(struct memalloc *);
struct memalloc	*memalloc_dup(const struct memalloc *);

/*
 * Allocate: find the request's initial zone, assign it, resolve any
 * overcommit of zones it touches by moving requests (libmem's Allocate).
 * 0 and *zone, or -1 with *err and nothing changed. Requests moved to
 * make room are in log (with the new one); log may be NULL.
 */
int	memalloc_allocate(struct memalloc *, const struct memalloc_req *,
	    struct memalloc_log *, memmask_t *zone, char **err);
/* What memalloc_allocate would give, nothing changed (libmem's offer).
 * *moved, when not NULL, is how many other requests would move. */
int	memalloc_offer(struct memalloc *, const struct memalloc_req *,
	    memmask_t *zone, int *moved, char **err);
/* Put a saved assignment back as it was: no search, no overcommit
 * handling (restore at start). -1 with *err for an unknown node, an
 * empty zone or an id already there. */
int	memalloc_restore(struct memalloc *, const struct memalloc_req *,
	    memmask_t zone, char **err);
/*
 * Widen a request's zone by affinity and types (libmem's Realloc): 0 and
 * *zone, the same when nothing is new; or -1 with *err and nothing
 * changed for an unknown id or node, strict types not present, no nodes
 * to widen by, or an overcommit it cannot resolve.
 */
int	memalloc_realloc(struct memalloc *, const char *id, memmask_t affinity,
	    unsigned types, struct memalloc_log *, memmask_t *zone, char **err);
/* 0, or -1 when the id is unknown. */
int	memalloc_release(struct memalloc *, const char *id,
	    struct memalloc_log *);

/* Undo what log recorded (newest first) and empty it, freeing what it
 * held. A log starts zeroed; a NULL log records nothing. */
void	memalloc_revert(struct memalloc *, struct memalloc_log *);
/* Forget what log recorded (keep the changes) and free what it held. */
void	memalloc_log_clear(struct memalloc_log *);

/* A request's zone, 0 when it has none. */
memmask_t memalloc_zone_of(const struct memalloc *, const char *id);
long long memalloc_size_of(const struct memalloc *, const char *id);
int	memalloc_nnodes(const struct memalloc *);
const struct memalloc_node *memalloc_node(const struct memalloc *, int);
unsigned memalloc_types(const struct memalloc *);	/* types present */
unsigned memalloc_zone_types(const struct memalloc *, memmask_t);
/* The nodes a zone widens to by types, once (libmem's default zone
 * expansion): for each type, the nearest nodes of it outside the zone as
 * seen from the zone's nodes. 0 when there are none. */
memmask_t memalloc_expand(const struct memalloc *, memmask_t zone,
	    unsigned types);
long long memalloc_zone_capacity(const struct memalloc *, memmask_t);
long long memalloc_zone_usage(const struct memalloc *, memmask_t);
long long memalloc_zone_free(const struct memalloc *, memmask_t);
long long memalloc_zone_available(const struct memalloc *, memmask_t);
int	memalloc_nrequests(const struct memalloc *);

#endif
