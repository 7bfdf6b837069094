/*
 * memalloc.c owns the memory accounting allocator: libmem's semantics
 * (pkg/resmgr/lib/memory of containers/nri-plugins) over node indexes.
 *
 * A request is assigned a zone, a set of nodes. The usage of a zone is
 * the sum of the sizes of the requests whose zones lie inside it, so a
 * request on node 0 also uses the zones {0,1} and {0,1,2,3}. For every
 * zone that holds requests of its own we keep the sum of their sizes and
 * the requests themselves in the order the overcommit handler moves them
 * (lower priority, then smaller, then younger first). Usage, free and
 * overcommit checks then cost a pass over the zones, not the requests,
 * and shrinking one zone walks only that zone's requests.
 *
 * Where libmem iterates Go maps (zones, a zone's users, the overcommit
 * report), the order here is a total one, so the same calls always give
 * the same zones: on a copy, after a revert, after an offer.
 *
 * Every operation records the first state of each request it touches in
 * an operation log of its own. A failed operation plays that log back, so
 * it leaves no trace; a successful one folds it into the caller's log.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memalloc.h"
#include "strmap.h"
#include "xmalloc.h"

#define TYPES_ALL	(MEMALLOC_TYPE_DRAM | MEMALLOC_TYPE_PMEM | \
			 MEMALLOC_TYPE_HBM)
#define NTYPES		3

/* Room for a zone as text: 64 ids of up to 11 characters and commas. */
#define ZONESTR		(MEMALLOC_MAX_NODES * 12 + 1)

/* The nodes at one distance from a node. */
struct dclass {
	int		 dist;
	memmask_t	 nodes;
};

struct mnode {
	struct memalloc_node	 n;	/* n.distance is row */
	int			*row;
	struct dclass		*cls;	/* by distance, itself left out */
	int			 ncls;
};

struct mreq {
	char			*id;
	long long		 size;
	memmask_t		 affinity;
	unsigned		 types;
	int			 strict;
	int			 prio;
	unsigned long long	 seq;
	memmask_t		 zone;
	/* Its entry in the operation log, when gen is the operation's. */
	unsigned long long	 gen;
	int			 logi;
};

struct mzone {
	memmask_t	 nodes;
	unsigned	 types;
	long long	 capacity;
	long long	 size;		/* of its own users */
	struct mreq	**users;	/* in the order they are moved out */
	int		 nusers;
	int		 maxusers;
};

/* An overcommitted zone and by how much. */
struct spill {
	memmask_t	 zone;
	long long	 amount;
	int		 nusers;
};

struct memalloc {
	struct mnode		*nodes;
	int			 nnodes;
	memmask_t		 all;		/* every node */
	memmask_t		 hasmem;	/* nodes with memory */
	memmask_t		 normal;	/* ... of it normal */
	memmask_t		 bytype[NTYPES];	/* ... of it by type */
	unsigned		 types;		/* types with memory */

	struct strmap		*reqs;		/* id to mreq, keyed by its id */
	struct mzone		**zones;	/* by nodes, ascending */
	int			 nzones;
	int			 maxzones;

	/* The running operation: its log and whether it records. */
	struct memalloc_log	 op;
	int			 logging;
	unsigned long long	 gen;

	/* Scratch for the overcommit handler. */
	struct spill		*oc;
	int			 maxoc;
	struct mreq		**cand;
	int			 maxcand;
};

static int
fail(char **err, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));

static int
fail(char **err, const char *fmt, ...)
{
	va_list	 ap, aq;
	int	 len;

	if (err == NULL)
		return (-1);
	va_start(ap, fmt);
	va_copy(aq, ap);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*err = xmalloc(len + 1);
	vsnprintf(*err, len + 1, fmt, aq);
	va_end(aq);
	return (-1);
}

static int
popcount(memmask_t m)
{
	return (__builtin_popcountll(m));
}

static int
lowest(memmask_t m)
{
	return (__builtin_ctzll(m));
}

/* The node ids of a zone as "0-3,8", ascending, into buf (ZONESTR). */
static const char *
zone_str(const struct memalloc *a, memmask_t zone, char *buf)
{
	int	 ids[MEMALLOC_MAX_NODES], n = 0, i, j, t;
	size_t	 off = 0;

	for (zone &= a->all; zone != 0; zone &= zone - 1)
		ids[n++] = a->nodes[lowest(zone)].n.id;
	/* Indexes need not follow ids: sort them, few as they are. */
	for (i = 1; i < n; i++) {
		t = ids[i];
		for (j = i; j > 0 && ids[j - 1] > t; j--)
			ids[j] = ids[j - 1];
		ids[j] = t;
	}
	buf[0] = '\0';
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++)
			;
		if (j - 1 > i)
			off += snprintf(buf + off, ZONESTR - off, "%s%d-%d",
			    off ? "," : "", ids[i], ids[j - 1]);
		else
			off += snprintf(buf + off, ZONESTR - off, "%s%d",
			    off ? "," : "", ids[i]);
	}
	return (buf);
}

static const char *
types_str(unsigned types)
{
	static const char	*names[] = {
		"", "DRAM", "PMEM", "DRAM,PMEM", "HBM", "DRAM,HBM",
		"PMEM,HBM", "DRAM,PMEM,HBM"
	};

	if (types & ~TYPES_ALL)
		return ("unknown");
	return (names[types]);
}

/* The types of the nodes of a zone, with memory or not (zoneType). */
static unsigned
zone_types(const struct memalloc *a, memmask_t zone)
{
	unsigned	types = 0;

	for (zone &= a->all; zone != 0; zone &= zone - 1)
		types |= 1u << a->nodes[lowest(zone)].n.type;
	return (types);
}

/* The nodes with memory of any of the types (libmem's byTypes). */
static memmask_t
by_types(const struct memalloc *a, unsigned types)
{
	memmask_t	nodes = 0;
	int		t;

	/* A type libmem does not know matches no node, as its map does. */
	if (types & ~TYPES_ALL)
		return (0);
	for (t = 0; t < NTYPES; t++)
		if (types & 1u << t)
			nodes |= a->bytype[t];
	return (nodes);
}

static long long
zone_capacity(const struct memalloc *a, memmask_t zone)
{
	long long	cap = 0;

	for (zone &= a->hasmem; zone != 0; zone &= zone - 1)
		cap += a->nodes[lowest(zone)].n.capacity;
	return (cap);
}

/* What the requests inside a zone use: its own and its subzones'. */
static long long
zone_usage(const struct memalloc *a, memmask_t zone)
{
	long long	usage = 0;
	int		i;

	for (i = 0; i < a->nzones; i++)
		if ((a->zones[i]->nodes & ~zone) == 0)
			usage += a->zones[i]->size;
	return (usage);
}

static long long
zone_free(const struct memalloc *a, memmask_t zone)
{
	return (zone_capacity(a, zone) - zone_usage(a, zone));
}

/* Free memory, but no more than any zone holding this one has free. */
static long long
zone_available(const struct memalloc *a, memmask_t zone)
{
	long long	 avail, f;
	memmask_t	 z;
	int		 i;

	if ((avail = zone_free(a, zone)) <= 0)
		return (0);
	for (i = 0; i < a->nzones; i++) {
		z = a->zones[i]->nodes;
		if (z != zone && (z & zone) == zone &&
		    (f = zone_free(a, z)) < avail)
			avail = f;
		if (avail <= 0)
			return (0);
	}
	return (avail);
}

/*
 * The nearest nodes of type t outside a zone (newCloseNodesOfType): each
 * zone node in index order offers its nearest class that has such nodes;
 * the class is taken when no farther than the nearest taken so far. A
 * farther class taken before a nearer one stays, as it does in libmem.
 */
static memmask_t
close_nodes(const struct memalloc *a, memmask_t zone, int t)
{
	const struct mnode	*n;
	memmask_t		 m, cand, close = 0;
	int			 c, max = INT_MAX;

	cand = a->bytype[t] & ~zone;
	if (cand == 0)
		return (0);
	for (m = zone & a->all; m != 0; m &= m - 1) {
		n = &a->nodes[lowest(m)];
		for (c = 0; c < n->ncls; c++) {
			if ((n->cls[c].nodes & cand) == 0)
				continue;
			if (n->cls[c].dist <= max) {
				max = n->cls[c].dist;
				close |= n->cls[c].nodes & cand;
			}
			break;
		}
	}
	return (close);
}

/*
 * Widen a zone once by the nearest new nodes of each of the types, each
 * found from the zone as given (defaultExpand). *newtypes, when not NULL,
 * is the types of the nodes found.
 */
static memmask_t
expand(const struct memalloc *a, memmask_t zone, unsigned types,
    unsigned *newtypes)
{
	memmask_t	 nodes = 0, n;
	unsigned	 found = 0;
	int		 t;

	for (t = 0; t < NTYPES; t++) {
		if (!(types & 1u << t))
			continue;
		if ((n = close_nodes(a, zone, t)) != 0) {
			nodes |= n;
			found |= 1u << t;
		}
	}
	if (newtypes != NULL)
		*newtypes = found;
	return (nodes);
}

/* Total order of a zone's users: the order the overcommit handler moves
 * them in. Lower priority, smaller, younger (libmem's RequestsBy*), and
 * the id for requests libmem would leave in map order. */
static int
req_cmp(const struct mreq *r1, const struct mreq *r2)
{
	if (r1->prio != r2->prio)
		return (r1->prio < r2->prio ? -1 : 1);
	if (r1->size != r2->size)
		return (r1->size < r2->size ? -1 : 1);
	if (r1->seq != r2->seq)
		return (r1->seq > r2->seq ? -1 : 1);
	return (strcmp(r1->id, r2->id));
}

/* Index of zone nodes in a->zones, or where it goes as -1 - index. */
static int
zone_index(const struct memalloc *a, memmask_t nodes)
{
	int	lo = 0, hi = a->nzones, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a->zones[mid]->nodes == nodes)
			return (mid);
		if (a->zones[mid]->nodes < nodes)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (-1 - lo);
}

static struct mzone *
zone_find(const struct memalloc *a, memmask_t nodes)
{
	int	i = zone_index(a, nodes);

	return (i >= 0 ? a->zones[i] : NULL);
}

static struct mzone *
zone_get(struct memalloc *a, memmask_t nodes)
{
	struct mzone	*z;
	int		 i = zone_index(a, nodes);

	if (i >= 0)
		return (a->zones[i]);
	i = -1 - i;
	if (a->nzones == a->maxzones) {
		a->maxzones = a->maxzones ? a->maxzones * 2 : 8;
		a->zones = xreallocarray(a->zones, a->maxzones,
		    sizeof *a->zones);
	}
	memmove(&a->zones[i + 1], &a->zones[i],
	    (a->nzones - i) * sizeof *a->zones);
	z = xcalloc(1, sizeof *z);
	z->nodes = nodes;
	z->types = zone_types(a, nodes);
	z->capacity = zone_capacity(a, nodes);
	a->zones[i] = z;
	a->nzones++;
	return (z);
}

static void
zone_free_one(struct mzone *z)
{
	free(z->users);
	free(z);
}

/*
 * Drop the zones left without users. An operation keeps them until it
 * ends, as libmem does within a call, so that an overcommitted zone that
 * lost its own users is still seen; between operations every zone has
 * users, whatever the history.
 */
static void
zones_tidy(struct memalloc *a)
{
	int	i, j;

	for (i = j = 0; i < a->nzones; i++) {
		if (a->zones[i]->nusers == 0)
			zone_free_one(a->zones[i]);
		else
			a->zones[j++] = a->zones[i];
	}
	a->nzones = j;
}

/* Position of r among z's users, or where it goes. */
static int
user_index(const struct mzone *z, const struct mreq *r, int *found)
{
	int	lo = 0, hi = z->nusers, mid, c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = req_cmp(z->users[mid], r)) == 0) {
			*found = 1;
			return (mid);
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

static void
log_grow(struct memalloc_log *l)
{
	if (l->n == l->size) {
		l->size = l->size ? l->size * 2 : 8;
		l->v = xreallocarray(l->v, l->size, sizeof *l->v);
	}
}

/* Record r as it is now, before its first change in this operation. */
static void
note(struct memalloc *a, struct mreq *r)
{
	struct memalloc_change	*c;

	if (!a->logging || r->gen == a->gen)
		return;
	log_grow(&a->op);
	c = &a->op.v[a->op.n];
	memset(c, 0, sizeof *c);
	c->id = xstrdup(r->id);
	c->present = 1;
	c->size = r->size;
	c->zone = r->zone;
	c->affinity = r->affinity;
	c->types = r->types;
	c->strict = r->strict;
	c->prio = r->prio;
	c->seq = r->seq;
	c->after = r->zone;
	r->gen = a->gen;
	r->logi = a->op.n++;
}

/* Record that r, just made, was not there. */
static void
note_new(struct memalloc *a, struct mreq *r)
{
	struct memalloc_change	*c;

	if (!a->logging)
		return;
	log_grow(&a->op);
	c = &a->op.v[a->op.n];
	memset(c, 0, sizeof *c);
	c->id = xstrdup(r->id);
	r->gen = a->gen;
	r->logi = a->op.n++;
}

static void
noted(struct memalloc *a, const struct mreq *r)
{
	if (a->logging && r->gen == a->gen)
		a->op.v[r->logi].after = r->zone;
}

static void
zone_assign(struct memalloc *a, memmask_t nodes, struct mreq *r)
{
	struct mzone	*z;
	int		 i, found;

	note(a, r);
	z = zone_get(a, nodes);
	i = user_index(z, r, &found);
	if (z->nusers == z->maxusers) {
		z->maxusers = z->maxusers ? z->maxusers * 2 : 4;
		z->users = xreallocarray(z->users, z->maxusers,
		    sizeof *z->users);
	}
	memmove(&z->users[i + 1], &z->users[i],
	    (z->nusers - i) * sizeof *z->users);
	z->users[i] = r;
	z->nusers++;
	z->size += r->size;
	r->zone = nodes;
	noted(a, r);
}

static void
zone_remove(struct memalloc *a, struct mreq *r)
{
	struct mzone	*z;
	int		 i, found;

	if (r->zone == 0 || (z = zone_find(a, r->zone)) == NULL)
		return;
	i = user_index(z, r, &found);
	if (!found)
		return;
	note(a, r);
	memmove(&z->users[i], &z->users[i + 1],
	    (z->nusers - i - 1) * sizeof *z->users);
	z->nusers--;
	z->size -= r->size;
	r->zone = 0;
	noted(a, r);
}

static void
zone_move(struct memalloc *a, memmask_t nodes, struct mreq *r)
{
	if (r->zone == nodes)
		return;
	zone_remove(a, r);
	zone_assign(a, nodes, r);
}

static struct mreq *
req_new(struct memalloc *a, const char *id)
{
	struct mreq	*r;

	r = xcalloc(1, sizeof *r);
	r->id = xstrdup(id);
	strmap_put(a->reqs, r->id, r);
	return (r);
}

static void
req_free(void *p)
{
	struct mreq	*r = p;

	if (r != NULL) {
		free(r->id);
		free(r);
	}
}

static void
req_delete(struct memalloc *a, struct mreq *r)
{
	strmap_del(a->reqs, r->id);
	req_free(r);
}

/* Make the request of a log entry as it was before the entry. */
static void
unchange(struct memalloc *a, const struct memalloc_change *c)
{
	struct mreq	*r;

	if ((r = strmap_get(a->reqs, c->id)) != NULL) {
		zone_remove(a, r);
		if (!c->present) {
			req_delete(a, r);
			return;
		}
	} else if (!c->present)
		return;
	else
		r = req_new(a, c->id);
	r->size = c->size;
	r->affinity = c->affinity;
	r->types = c->types;
	r->strict = c->strict;
	r->prio = c->prio;
	r->seq = c->seq;
	if (c->zone != 0)
		zone_assign(a, c->zone, r);
}

/* Play a log back, newest first, and empty it (keeping its array). */
static void
undo(struct memalloc *a, struct memalloc_log *l)
{
	int	i;

	for (i = l->n - 1; i >= 0; i--) {
		unchange(a, &l->v[i]);
		free(l->v[i].id);
	}
	l->n = 0;
}

/*
 * Fold the operation's log into the caller's: a request already there
 * keeps its first state and takes the new zone after; one that is not
 * is added as the operation found it.
 */
static void
merge(struct memalloc_log *dst, struct memalloc_log *op)
{
	struct memalloc_change	*c;
	int			 i, j;

	for (i = 0; i < op->n; i++) {
		c = &op->v[i];
		if (dst == NULL) {
			free(c->id);
			continue;
		}
		for (j = 0; j < dst->n; j++)
			if (strcmp(dst->v[j].id, c->id) == 0)
				break;
		if (j < dst->n) {
			dst->v[j].after = c->after;
			free(c->id);
		} else {
			log_grow(dst);
			dst->v[dst->n++] = *c;
		}
	}
	op->n = 0;
}

static void
op_begin(struct memalloc *a)
{
	a->gen++;
	a->op.n = 0;
	a->logging = 1;
}

/* End the operation: keep its changes in log, or put them back. */
static void
op_end(struct memalloc *a, int ok, struct memalloc_log *log)
{
	a->logging = 0;
	if (ok)
		merge(log, &a->op);
	else
		undo(a, &a->op);
	zones_tidy(a);
}

/* Overcommitted zones first by more users, larger, then larger mask. */
static int
spill_cmp(const void *p1, const void *p2)
{
	const struct spill	*s1 = p1, *s2 = p2;
	int			 n1, n2;

	if (s1->nusers != s2->nusers)
		return (s1->nusers > s2->nusers ? -1 : 1);
	n1 = popcount(s1->zone);
	n2 = popcount(s2->zone);
	if (n1 != n2)
		return (n1 > n2 ? -1 : 1);
	if (s1->zone != s2->zone)
		return (s1->zone > s2->zone ? -1 : 1);
	return (0);
}

/*
 * The overcommitted zones touching nodes (every zone for 0), in the order
 * of libmem's ZonesByUsersSubzonesFirst: more users first; with as many
 * users, a zone before the zones holding it, otherwise the larger zone,
 * then the larger mask. That comparison is not transitive (a subzone
 * goes first, a smaller unrelated zone last), so Go's sort gives an order
 * that depends on map order. Here the order is the unique one that takes,
 * at each step, the first zone by the size and mask keys among those whose
 * subzones with as many users have already been taken.
 */
static int
overcommit(struct memalloc *a, memmask_t nodes)
{
	struct mzone	*z;
	struct spill	 s;
	long long	 f;
	int		 i, j, k, n = 0, end, minimal;

	for (i = 0; i < a->nzones; i++) {
		z = a->zones[i];
		if (nodes != 0 && (z->nodes & nodes) == 0)
			continue;
		if ((f = z->capacity - zone_usage(a, z->nodes)) >= 0)
			continue;
		if (n == a->maxoc) {
			a->maxoc = a->maxoc ? a->maxoc * 2 : 8;
			a->oc = xreallocarray(a->oc, a->maxoc, sizeof *a->oc);
		}
		a->oc[n].zone = z->nodes;
		a->oc[n].amount = -f;
		a->oc[n].nusers = z->nusers;
		n++;
	}
	if (n == 0)
		return (0);
	qsort(a->oc, n, sizeof *a->oc, spill_cmp);
	for (k = 0; k < n; k++) {
		for (end = k; end < n && a->oc[end].nusers == a->oc[k].nusers;
		    end++)
			;
		for (j = k; j < end; j++) {
			minimal = 1;
			for (i = k; i < end && minimal; i++)
				if (i != j &&
				    (a->oc[i].zone & ~a->oc[j].zone) == 0)
					minimal = 0;
			if (minimal)
				break;
		}
		/* Some zone is minimal: subzone is a partial order. */
		s = a->oc[j];
		memmove(&a->oc[k + 1], &a->oc[k], (j - k) * sizeof *a->oc);
		a->oc[k] = s;
	}
	return (n);
}

/*
 * Move requests of priority up to limit out of a zone to the zone widened
 * by its types and extra (zoneShrinkUsage) until amount bytes are out. A
 * strict request moves only when its types are the widened zone's.
 * Returns the bytes moved.
 */
static long long
shrink(struct memalloc *a, memmask_t zone, long long amount, int limit,
    unsigned extra)
{
	struct mzone	*z;
	struct mreq	*r;
	memmask_t	 nodes;
	unsigned	 newtypes, types;
	long long	 moved = 0;
	int		 i, n;

	if ((z = zone_find(a, zone)) == NULL || z->nusers == 0)
		return (0);
	if ((nodes = expand(a, zone, z->types | extra, &newtypes)) == 0)
		return (0);
	types = z->types | newtypes;
	/* The users are in moving order: take the ones of low priority. */
	for (n = 0; n < z->nusers && z->users[n]->prio <= limit; n++)
		;
	if (n == 0)
		return (0);
	if (n > a->maxcand) {
		a->maxcand = n;
		a->cand = xreallocarray(a->cand, n, sizeof *a->cand);
	}
	memcpy(a->cand, z->users, n * sizeof *a->cand);
	for (i = 0; i < n; i++) {
		r = a->cand[i];
		if (r->strict && r->types != types)
			continue;
		zone_move(a, zone | nodes, r);
		moved += r->size;
		if (moved >= amount)
			break;
	}
	return (moved);
}

/*
 * Resolve overcommit of the zones touching nodes (defaultHandleOvercommit):
 * move Burstable, then Guaranteed, then Preserved requests out, widening
 * zones by their own types, then also by DRAM, PMEM and HBM, rechecking
 * after each pass; give up when a whole round moves nothing.
 */
static int
resolve(struct memalloc *a, memmask_t nodes, char **err)
{
	static const int	 prios[] = {
		MEMALLOC_BURSTABLE, MEMALLOC_GUARANTEED, MEMALLOC_PRESERVED
	};
	static const unsigned	 extras[] = {
		0, MEMALLOC_TYPE_DRAM, MEMALLOC_TYPE_PMEM, MEMALLOC_TYPE_HBM
	};
	char			 buf[ZONESTR], *list = NULL, *s;
	long long		 moved, total = 0;
	unsigned		 types, extra;
	int			 n, p, e, i;

	if ((n = overcommit(a, nodes)) == 0)
		return (0);
	do {
		moved = 0;
		for (p = 0; p < 3; p++) {
			types = 0;
			for (e = 0; e < 4; e++) {
				if ((extra = extras[e]) != 0) {
					if ((extra &= a->types) == 0)
						continue;
					types |= extra;
				}
				for (i = 0; i < n; i++)
					moved += shrink(a, a->oc[i].zone,
					    a->oc[i].amount, prios[p], types);
				if ((n = overcommit(a, nodes)) == 0)
					return (0);
			}
		}
	} while (moved != 0);

	for (i = 0; i < n; i++) {
		total += a->oc[i].amount;
		xasprintf(&s, "%s%s{%s}", list ? list : "", list ? "," : "",
		    zone_str(a, a->oc[i].zone, buf));
		free(list);
		list = s;
	}
	fail(err, "cannot resolve memory overcommit: zones %s overcommitted "
	    "by %lld bytes", list, total);
	free(list);
	return (-1);
}

/* A request as validateRequest leaves it: types narrowed or defaulted. */
static int
validate(const struct memalloc *a, const struct memalloc_req *req,
    unsigned *types, char **err)
{
	if (req->id == NULL)
		return (fail(err, "memory request without an id"));
	if (strmap_get(a->reqs, req->id) != NULL)
		return (fail(err, "memory request %s already exists", req->id));
	if (req->affinity & ~a->all)
		return (fail(err, "memory request %s: affinity 0x%llx has "
		    "unknown nodes", req->id,
		    (unsigned long long)req->affinity));
	if (req->strict && (req->types & ~a->types))
		return (fail(err, "memory request %s: strict types %s not "
		    "present", req->id, types_str(req->types & ~a->types)));
	if (req->affinity == 0)
		return (fail(err, "memory request %s: no node affinity",
		    req->id));
	if (req->size < 0)
		return (fail(err, "memory request %s: negative size",
		    req->id));
	*types = req->types & a->types;
	if (*types == 0)
		*types = zone_types(a, req->affinity);
	return (0);
}

/*
 * The zone to start from (findInitialZone): the affinity, widened once
 * by the nearest nodes of each type it lacks, then cut to the wanted
 * types: always for strict types, when some node is left otherwise.
 */
static int
initial_zone(const struct memalloc *a, const struct memalloc_req *req,
    unsigned types, memmask_t *zone, char **err)
{
	memmask_t	 z = req->affinity & a->all, prefer;
	unsigned	 miss;

	if ((miss = types & ~zone_types(a, z)) != 0)
		z |= expand(a, z, miss, NULL);
	if (req->strict) {
		z &= by_types(a, types);
		if ((miss = types & ~zone_types(a, z)) != 0)
			return (fail(err, "memory request %s: no nodes of "
			    "type %s near its affinity", req->id,
			    types_str(miss)));
	} else if ((prefer = z & by_types(a, types)) != 0)
		z = prefer;
	*zone = z;
	return (0);
}

/*
 * Widen the zone until it has normal (not only movable) memory
 * (ensureNormalMemory), by the wanted types that have normal memory or,
 * for types that are not strict, by the first of DRAM, PMEM and HBM that
 * has. The types widened by are added to the request's.
 */
static int
normal_zone(const struct memalloc *a, const struct memalloc_req *req,
    unsigned *types, memmask_t *zone, char **err)
{
	memmask_t	 z = *zone, n;
	unsigned	 normal, t;

	if (z & a->normal)
		return (0);
	normal = zone_types(a, a->normal);
	if ((t = *types & normal) == 0) {
		if (req->strict)
			return (fail(err, "memory request %s: no normal memory "
			    "of types %s", req->id, types_str(*types)));
		if (normal & MEMALLOC_TYPE_DRAM)
			t = MEMALLOC_TYPE_DRAM;
		else if (normal & MEMALLOC_TYPE_PMEM)
			t = MEMALLOC_TYPE_PMEM;
		else if (normal & MEMALLOC_TYPE_HBM)
			t = MEMALLOC_TYPE_HBM;
		else
			return (fail(err, "memory request %s: no normal "
			    "memory", req->id));
	}
	while ((n = expand(a, z, t, NULL)) != 0) {
		z |= n;
		if (z & a->normal) {
			*zone = z;
			*types |= t;
			return (0);
		}
	}
	return (fail(err, "memory request %s: no normal memory of types %s",
	    req->id, types_str(t)));
}

static int
allocate(struct memalloc *a, const struct memalloc_req *req, memmask_t *zone,
    char **err)
{
	struct mreq	*r;
	memmask_t	 z = 0;
	unsigned	 types = 0;

	if (validate(a, req, &types, err) == -1 ||
	    initial_zone(a, req, types, &z, err) == -1 ||
	    normal_zone(a, req, &types, &z, err) == -1)
		return (-1);
	r = req_new(a, req->id);
	r->size = req->size;
	r->affinity = req->affinity;
	r->types = types;
	r->strict = req->strict != 0;
	r->prio = req->prio;
	r->seq = req->seq;
	note_new(a, r);
	zone_assign(a, z, r);
	if (resolve(a, z, err) == -1)
		return (-1);
	*zone = r->zone;
	return (0);
}

struct memalloc *
memalloc_new(const struct memalloc_node *nodes, int n, char **err)
{
	struct memalloc	*a;
	struct mnode	*mn;
	struct dclass	 t;
	int		 i, j, k, d;

	if (n < 0 || n > MEMALLOC_MAX_NODES) {
		fail(err, "%d memory nodes, at most %d are supported", n,
		    MEMALLOC_MAX_NODES);
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		if ((unsigned)nodes[i].type > MEM_TYPE_HBM) {
			fail(err, "memory node %d: unknown type %d",
			    nodes[i].id, (int)nodes[i].type);
			return (NULL);
		}
		if (nodes[i].distance == NULL || nodes[i].ndistance != n) {
			fail(err, "memory node %d: %d distances for %d nodes",
			    nodes[i].id, nodes[i].distance == NULL ? 0 :
			    nodes[i].ndistance, n);
			return (NULL);
		}
		for (j = 0; j < n; j++) {
			if (j != i &&
			    nodes[i].distance[j] <= nodes[i].distance[i]) {
				fail(err, "memory node %d: node %d is no "
				    "farther than itself", nodes[i].id,
				    nodes[j].id);
				return (NULL);
			}
		}
	}

	a = xcalloc(1, sizeof *a);
	a->nnodes = n;
	a->nodes = xcalloc(n > 0 ? n : 1, sizeof *a->nodes);
	a->reqs = strmap_new_borrowing();
	for (i = 0; i < n; i++) {
		mn = &a->nodes[i];
		mn->n = nodes[i];
		mn->row = xreallocarray(NULL, n, sizeof *mn->row);
		memcpy(mn->row, nodes[i].distance, n * sizeof *mn->row);
		mn->n.distance = mn->row;
		mn->cls = xcalloc(n, sizeof *mn->cls);
		/* Distance classes of the other nodes, nearest first. */
		for (j = 0; j < n; j++) {
			if (j == i)
				continue;
			d = mn->row[j];
			for (k = 0; k < mn->ncls && mn->cls[k].dist != d; k++)
				;
			if (k == mn->ncls) {
				mn->cls[k].dist = d;
				mn->ncls++;
			}
			mn->cls[k].nodes |= (memmask_t)1 << j;
		}
		for (j = 1; j < mn->ncls; j++) {
			t = mn->cls[j];
			for (k = j; k > 0 && mn->cls[k - 1].dist > t.dist; k--)
				mn->cls[k] = mn->cls[k - 1];
			mn->cls[k] = t;
		}

		a->all |= (memmask_t)1 << i;
		if (mn->n.capacity > 0) {
			a->hasmem |= (memmask_t)1 << i;
			if (mn->n.normal)
				a->normal |= (memmask_t)1 << i;
			a->bytype[mn->n.type] |= (memmask_t)1 << i;
			a->types |= 1u << mn->n.type;
		}
	}
	return (a);
}

void
memalloc_free(struct memalloc *a)
{
	int	i;

	if (a == NULL)
		return;
	for (i = 0; i < a->nnodes; i++) {
		free(a->nodes[i].row);
		free(a->nodes[i].cls);
	}
	free(a->nodes);
	strmap_free_all(a->reqs, req_free);
	for (i = 0; i < a->nzones; i++)
		zone_free_one(a->zones[i]);
	free(a->zones);
	memalloc_log_clear(&a->op);
	free(a->oc);
	free(a->cand);
	free(a);
}

static void
dup_req(const char *id, void *value, void *arg)
{
	struct memalloc	*b = arg;
	struct mreq	*r = value, *c;

	c = xmalloc(sizeof *c);
	*c = *r;
	c->id = xstrdup(r->id);
	c->gen = 0;
	c->logi = 0;
	strmap_put(b->reqs, c->id, c);
}

struct memalloc *
memalloc_dup(const struct memalloc *a)
{
	struct memalloc	*b;
	struct mnode	*mn;
	struct mzone	*z;
	int		 i, j;

	b = xcalloc(1, sizeof *b);
	b->nnodes = a->nnodes;
	b->all = a->all;
	b->hasmem = a->hasmem;
	b->normal = a->normal;
	memcpy(b->bytype, a->bytype, sizeof b->bytype);
	b->types = a->types;
	b->nodes = xcalloc(a->nnodes > 0 ? a->nnodes : 1, sizeof *b->nodes);
	for (i = 0; i < a->nnodes; i++) {
		mn = &b->nodes[i];
		*mn = a->nodes[i];
		mn->row = xreallocarray(NULL, a->nnodes, sizeof *mn->row);
		memcpy(mn->row, a->nodes[i].row, a->nnodes * sizeof *mn->row);
		mn->n.distance = mn->row;
		mn->cls = xcalloc(a->nnodes, sizeof *mn->cls);
		memcpy(mn->cls, a->nodes[i].cls, mn->ncls * sizeof *mn->cls);
	}
	b->reqs = strmap_new_borrowing();
	strmap_each(a->reqs, dup_req, b);
	b->nzones = b->maxzones = a->nzones;
	b->zones = xcalloc(a->nzones > 0 ? a->nzones : 1, sizeof *b->zones);
	for (i = 0; i < a->nzones; i++) {
		z = xmalloc(sizeof *z);
		*z = *a->zones[i];
		z->maxusers = z->nusers;
		z->users = xcalloc(z->nusers > 0 ? z->nusers : 1,
		    sizeof *z->users);
		for (j = 0; j < z->nusers; j++)
			z->users[j] = strmap_get(b->reqs,
			    a->zones[i]->users[j]->id);
		b->zones[i] = z;
	}
	return (b);
}

int
memalloc_allocate(struct memalloc *a, const struct memalloc_req *req,
    struct memalloc_log *log, memmask_t *zone, char **err)
{
	memmask_t	z = 0;
	int		rc;

	op_begin(a);
	rc = allocate(a, req, &z, err);
	op_end(a, rc == 0, log);
	if (zone != NULL)
		*zone = rc == 0 ? z : 0;
	return (rc);
}

int
memalloc_offer(struct memalloc *a, const struct memalloc_req *req,
    memmask_t *zone, int *moved, char **err)
{
	memmask_t	z = 0;
	int		rc, i, n = 0;

	op_begin(a);
	rc = allocate(a, req, &z, err);
	for (i = 0; rc == 0 && i < a->op.n; i++)
		if (strcmp(a->op.v[i].id, req->id) != 0)
			n++;
	op_end(a, 0, NULL);
	if (zone != NULL)
		*zone = rc == 0 ? z : 0;
	if (moved != NULL)
		*moved = rc == 0 ? n : 0;
	return (rc);
}

int
memalloc_restore(struct memalloc *a, const struct memalloc_req *req,
    memmask_t zone, char **err)
{
	struct mreq	*r;
	unsigned	 types;

	if (req->id == NULL)
		return (fail(err, "memory request without an id"));
	if (strmap_get(a->reqs, req->id) != NULL)
		return (fail(err, "memory request %s already exists", req->id));
	if (zone == 0 || (zone & ~a->all) || (req->affinity & ~a->all))
		return (fail(err, "memory request %s: zone 0x%llx or affinity "
		    "0x%llx has unknown nodes", req->id,
		    (unsigned long long)zone,
		    (unsigned long long)req->affinity));
	if (req->size < 0)
		return (fail(err, "memory request %s: negative size",
		    req->id));
	/* The types as allocate leaves them. */
	if ((types = req->types & a->types) == 0)
		types = zone_types(a, req->affinity ? req->affinity : zone);
	r = req_new(a, req->id);
	r->size = req->size;
	r->affinity = req->affinity ? req->affinity : zone;
	r->types = types;
	r->strict = req->strict != 0;
	r->prio = req->prio;
	r->seq = req->seq;
	zone_assign(a, zone, r);
	return (0);
}

int
memalloc_realloc(struct memalloc *a, const char *id, memmask_t affinity,
    unsigned types, struct memalloc_log *log, memmask_t *zone, char **err)
{
	struct mreq	*r;
	memmask_t	 nodes = affinity, newnodes, to;
	unsigned	 newtypes;
	int		 rc = -1;

	if (zone != NULL)
		*zone = 0;
	if ((r = strmap_get(a->reqs, id)) == NULL)
		return (fail(err, "no memory request %s", id));
	/*
	 * validateRealloc. libmem checks the request's own affinity and
	 * types here, which allocate has checked already; the new ones are
	 * what can be wrong.
	 */
	if ((nodes == 0 && types == 0) ||
	    (r->affinity == nodes && r->types == types))
		goto done;
	if (nodes & ~a->all)
		return (fail(err, "memory request %s: affinity 0x%llx has "
		    "unknown nodes", id, (unsigned long long)nodes));
	if (r->strict && (types & ~a->types))
		return (fail(err, "memory request %s: strict types %s not "
		    "present", id, types_str(types & ~a->types)));
	if ((r->zone & nodes) == nodes &&
	    (zone_types(a, r->zone) & types) == types)
		goto done;
	if (types == 0)
		types = zone_types(a, nodes);
	else
		nodes &= by_types(a, types);

	op_begin(a);
	if ((newnodes = expand(a, r->zone | nodes, types, &newtypes)) == 0) {
		fail(err, "memory request %s: no new nodes of types %s",
		    id, types_str(types));
		goto out;
	}
	to = r->zone | nodes | newnodes;
	zone_move(a, to, r);
	if (resolve(a, to, err) == -1)
		goto out;
	note(a, r);
	r->types |= newtypes;
	rc = 0;
out:
	op_end(a, rc == 0, log);
	if (rc == -1)
		return (-1);
done:
	if (zone != NULL)
		*zone = r->zone;
	return (0);
}

int
memalloc_release(struct memalloc *a, const char *id, struct memalloc_log *log)
{
	struct mreq	*r;

	if ((r = strmap_get(a->reqs, id)) == NULL)
		return (-1);
	op_begin(a);
	zone_remove(a, r);
	req_delete(a, r);
	op_end(a, 1, log);
	return (0);
}

void
memalloc_revert(struct memalloc *a, struct memalloc_log *log)
{
	if (log == NULL)
		return;
	undo(a, log);
	zones_tidy(a);
	memalloc_log_clear(log);
}

void
memalloc_log_clear(struct memalloc_log *log)
{
	int	i;

	if (log == NULL)
		return;
	for (i = 0; i < log->n; i++)
		free(log->v[i].id);
	free(log->v);
	log->v = NULL;
	log->n = log->size = 0;
}

memmask_t
memalloc_zone_of(const struct memalloc *a, const char *id)
{
	const struct mreq	*r = strmap_get(a->reqs, id);

	return (r != NULL ? r->zone : 0);
}

long long
memalloc_size_of(const struct memalloc *a, const char *id)
{
	const struct mreq	*r = strmap_get(a->reqs, id);

	return (r != NULL ? r->size : 0);
}

int
memalloc_nnodes(const struct memalloc *a)
{
	return (a->nnodes);
}

const struct memalloc_node *
memalloc_node(const struct memalloc *a, int i)
{
	if (i < 0 || i >= a->nnodes)
		return (NULL);
	return (&a->nodes[i].n);
}

unsigned
memalloc_types(const struct memalloc *a)
{
	return (a->types);
}

unsigned
memalloc_zone_types(const struct memalloc *a, memmask_t zone)
{
	return (zone_types(a, zone));
}

/* As libmem's exported Zone* functions: only the nodes with memory. */
long long
memalloc_zone_capacity(const struct memalloc *a, memmask_t zone)
{
	return (zone_capacity(a, zone & a->hasmem));
}

long long
memalloc_zone_usage(const struct memalloc *a, memmask_t zone)
{
	return (zone_usage(a, zone & a->hasmem));
}

long long
memalloc_zone_free(const struct memalloc *a, memmask_t zone)
{
	return (zone_free(a, zone & a->hasmem));
}

long long
memalloc_zone_available(const struct memalloc *a, memmask_t zone)
{
	return (zone_available(a, zone & a->hasmem));
}

int
memalloc_nrequests(const struct memalloc *a)
{
	return ((int)strmap_count(a->reqs));
}

memmask_t
memalloc_expand(const struct memalloc *a, memmask_t zone, unsigned types)
{
	return (expand(a, zone & a->all, types, NULL));
}
