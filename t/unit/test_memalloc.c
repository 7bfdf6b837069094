/*
 * test_memalloc.c: the memory accounting allocator. The go_* tests are
 * the tables of libmem's allocator_test.go (TestOffer, TestExpand,
 * TestAllocate, TestPreservedAllocation, TestStrictAllocation,
 * TestRealloc, TestOfferInvalidation, TestEnsureNormalMemory) on their
 * node layouts, with their sizes and expected zones. libmem's QoS class
 * "" is BestEffort, and its preserved containers have no types. The rest
 * check what our callers rely on: the log and revert, copies, offers,
 * and that the same calls always give the same zones.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memalloc.h"
#include "xmalloc.h"

#define B(i)	((memmask_t)1 << (i))
#define DRAM	MEMALLOC_TYPE_DRAM
#define PMEM	MEMALLOC_TYPE_PMEM
#define HBM	MEMALLOC_TYPE_HBM
#define BE	MEMALLOC_BESTEFFORT
#define BU	MEMALLOC_BURSTABLE
#define GU	MEMALLOC_GUARANTEED
#define PR	MEMALLOC_PRESERVED
#define RS	MEMALLOC_RESERVATION

#define N0123	(B(0) | B(1) | B(2) | B(3))
#define N4567	(B(4) | B(5) | B(6) | B(7))

/* 4 DRAM and 4 PMEM nodes of 4 bytes: libmem's test setup. */
static const int d8[8][8] = {
	{ 10, 21, 11, 21, 17, 28, 28, 28 },
	{ 21, 10, 21, 11, 28, 28, 17, 28 },
	{ 11, 21, 10, 21, 28, 17, 28, 28 },
	{ 21, 11, 21, 10, 28, 28, 28, 17 },
	{ 17, 28, 28, 28, 10, 28, 28, 28 },
	{ 28, 28, 17, 28, 28, 10, 28, 28 },
	{ 28, 17, 28, 28, 28, 28, 10, 28 },
	{ 28, 28, 28, 17, 28, 28, 28, 10 },
};

/* 4 DRAM, 4 PMEM and 4 HBM nodes: TestExpand's. */
static const int d12[12][12] = {
	{ 10, 11, 21, 21, 17, 27, 28, 28, 14, 15, 23, 23 },
	{ 11, 10, 21, 21, 27, 17, 28, 28, 15, 14, 23, 23 },
	{ 21, 21, 10, 11, 28, 28, 17, 27, 23, 23, 14, 15 },
	{ 21, 21, 11, 10, 28, 28, 27, 17, 23, 23, 15, 14 },
	{ 17, 27, 28, 28, 10, 28, 28, 28, 16, 26, 26, 26 },
	{ 27, 17, 28, 28, 28, 10, 28, 28, 29, 11, 29, 29 },
	{ 28, 28, 17, 27, 28, 28, 10, 28, 29, 29, 11, 29 },
	{ 28, 28, 27, 17, 28, 28, 28, 10, 29, 29, 29, 11 },
	{ 14, 15, 23, 23, 16, 29, 29, 29, 10, 12, 12, 12 },
	{ 15, 14, 23, 23, 26, 11, 29, 29, 12, 10, 12, 12 },
	{ 23, 23, 14, 15, 26, 29, 11, 29, 12, 12, 10, 12 },
	{ 23, 23, 15, 14, 26, 29, 29, 11, 12, 12, 12, 10 },
};

static const int d2[2][2] = {
	{ 10, 21 },
	{ 21, 10 },
};

/* n nodes of the given types, capacity each, normal or not, rows. */
static struct memalloc *
build(int n, const enum mem_type *types, long long cap, const int *normal,
    const int *rows)
{
	struct memalloc_node	 nodes[16];
	struct memalloc		*a;
	char			*err = NULL;
	int			 i;

	for (i = 0; i < n; i++) {
		nodes[i].id = i;
		nodes[i].type = types[i];
		nodes[i].capacity = cap;
		nodes[i].normal = normal == NULL ? 1 : normal[i];
		nodes[i].distance = rows + i * n;
		nodes[i].ndistance = n;
	}
	a = memalloc_new(nodes, n, &err);
	cr_assert_not_null(a, "memalloc_new: %s", err ? err : "");
	return (a);
}

static const enum mem_type t8[8] = {
	MEM_TYPE_DRAM, MEM_TYPE_DRAM, MEM_TYPE_DRAM, MEM_TYPE_DRAM,
	MEM_TYPE_PMEM, MEM_TYPE_PMEM, MEM_TYPE_PMEM, MEM_TYPE_PMEM
};

static struct memalloc *
build8(void)
{
	return (build(8, t8, 4, NULL, &d8[0][0]));
}

/* The same with movable PMEM: TestEnsureNormalMemory's. */
static struct memalloc *
build8_movable(void)
{
	static const int	normal[8] = { 1, 1, 1, 1, 0, 0, 0, 0 };

	return (build(8, t8, 4, normal, &d8[0][0]));
}

static struct memalloc *
build12(void)
{
	static const enum mem_type	t[12] = {
		MEM_TYPE_DRAM, MEM_TYPE_DRAM, MEM_TYPE_DRAM, MEM_TYPE_DRAM,
		MEM_TYPE_PMEM, MEM_TYPE_PMEM, MEM_TYPE_PMEM, MEM_TYPE_PMEM,
		MEM_TYPE_HBM, MEM_TYPE_HBM, MEM_TYPE_HBM, MEM_TYPE_HBM
	};

	return (build(12, t, 4, NULL, &d12[0][0]));
}

static unsigned long long	seq;

static struct memalloc_req
req(const char *id, long long size, memmask_t affinity, unsigned types,
    int strict, int prio)
{
	struct memalloc_req	r;

	memset(&r, 0, sizeof r);
	r.id = id;
	r.size = size;
	r.affinity = affinity;
	r.types = types;
	r.strict = strict;
	r.prio = prio;
	r.seq = ++seq;
	return (r);
}

/* Allocate and insist on zone want; log may be NULL. */
static void
alloc_ok(struct memalloc *a, const char *id, long long size,
    memmask_t affinity, unsigned types, int strict, int prio, memmask_t want,
    struct memalloc_log *log)
{
	struct memalloc_req	 r;
	memmask_t		 zone = 0;
	char			*err = NULL;

	r = req(id, size, affinity, types, strict, prio);
	cr_assert_eq(memalloc_allocate(a, &r, log, &zone, &err), 0,
	    "allocate %s: %s", id, err ? err : "");
	cr_assert_eq(zone, want, "allocate %s: zone 0x%llx, want 0x%llx", id,
	    (unsigned long long)zone, (unsigned long long)want);
	cr_assert_eq(memalloc_zone_of(a, id), want);
}

/* Every request's zone and size, and usage, free and available memory
 * of every set of nodes: two equal snapshots are one state. */
struct snap {
	int		 nreq;
	memmask_t	 zone[32];
	long long	 size[32];
	long long	 usage[4096];
	long long	 free[4096];
	long long	 avail[4096];
};

static const char	*ids[32] = {
	"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13",
	"14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24",
	"a", "b", "c", "d", "e", "f", "g", "h"
};

static struct snap *
snapshot(const struct memalloc *a)
{
	struct snap	*s = xcalloc(1, sizeof *s);
	memmask_t	 m;
	int		 i;

	s->nreq = memalloc_nrequests(a);
	for (i = 0; i < 32; i++) {
		s->zone[i] = memalloc_zone_of(a, ids[i]);
		s->size[i] = memalloc_size_of(a, ids[i]);
	}
	for (m = 0; m < ((memmask_t)1 << memalloc_nnodes(a)); m++) {
		s->usage[m] = memalloc_zone_usage(a, m);
		s->free[m] = memalloc_zone_free(a, m);
		s->avail[m] = memalloc_zone_available(a, m);
	}
	return (s);
}

static void
assert_same(struct snap *s1, struct snap *s2, const char *what)
{
	int	i;

	cr_assert_eq(s1->nreq, s2->nreq, "%s: %d requests, were %d", what,
	    s2->nreq, s1->nreq);
	for (i = 0; i < 32; i++)
		cr_assert(s1->zone[i] == s2->zone[i] &&
		    s1->size[i] == s2->size[i], "%s: request %s in 0x%llx, "
		    "was 0x%llx", what, ids[i],
		    (unsigned long long)s2->zone[i],
		    (unsigned long long)s1->zone[i]);
	cr_assert(memcmp(s1->usage, s2->usage, sizeof s1->usage) == 0 &&
	    memcmp(s1->free, s2->free, sizeof s1->free) == 0 &&
	    memcmp(s1->avail, s2->avail, sizeof s1->avail) == 0,
	    "%s: zone usage differs", what);
	free(s1);
	free(s2);
}

/* The zone of id's entry in log after the change, -1 without one. */
static long long
logged(const struct memalloc_log *log, const char *id)
{
	int	i;

	for (i = 0; i < log->n; i++)
		if (strcmp(log->v[i].id, id) == 0)
			return ((long long)log->v[i].after);
	return (-1);
}

/* A row of libmem's allocation tables: a request and what it gets. */
struct upd {
	const char	*id;
	memmask_t	 zone;
};

struct acase {
	const char	*name;
	const char	*id;
	long long	 limit;
	unsigned	 types;
	int		 prio;
	int		 strict;
	memmask_t	 affinity;
	memmask_t	 result;
	struct upd	 updates[3];
	int		 fail;
	const char	*release[14];
};

/* name, id, size, types, priority, strict, affinity */
#define REQ(n, i, l, t, p, s, a)					\
	.name = (n), .id = (i), .limit = (l), .types = (t),		\
	.prio = (p), .strict = (s), .affinity = (a)

/*
 * Run a table: each allocation gives the zone of the table and moves
 * exactly the requests of its updates there (libmem's updates are the
 * log's entries other than the request's own); a failure changes nothing.
 */
static void
run_table(struct memalloc *a, const struct acase *tc, int n)
{
	struct memalloc_log	 log = { 0 };
	struct memalloc_req	 r;
	struct snap		*before;
	memmask_t		 zone;
	char			*err;
	int			 i, j, nupd, rc;

	for (i = 0; i < n; i++, tc++) {
		r = req(tc->id, tc->limit, tc->affinity, tc->types, tc->strict,
		    tc->prio);
		before = snapshot(a);
		err = NULL;
		zone = B(63);
		rc = memalloc_allocate(a, &r, &log, &zone, &err);
		if (tc->fail) {
			cr_assert_eq(rc, -1, "%s: allocated", tc->name);
			cr_assert_not_null(err, "%s: no error", tc->name);
			cr_assert_eq(zone, 0, "%s", tc->name);
			cr_assert_eq(log.n, 0, "%s: logged", tc->name);
			assert_same(before, snapshot(a), tc->name);
			free(err);
		} else {
			free(before);
			cr_assert_eq(rc, 0, "%s: %s", tc->name, err ? err : "");
			cr_assert_eq(zone, tc->result,
			    "%s: zone 0x%llx, want 0x%llx", tc->name,
			    (unsigned long long)zone,
			    (unsigned long long)tc->result);
			cr_assert_eq(logged(&log, tc->id), (long long)zone,
			    "%s: own entry", tc->name);
			for (nupd = 0; nupd < 3 && tc->updates[nupd].id; nupd++)
				cr_assert_eq(logged(&log, tc->updates[nupd].id),
				    (long long)tc->updates[nupd].zone,
				    "%s: %s moved to 0x%llx", tc->name,
				    tc->updates[nupd].id, (unsigned long long)
				    logged(&log, tc->updates[nupd].id));
			cr_assert_eq(log.n, nupd + 1, "%s: %d moved, want %d",
			    tc->name, log.n - 1, nupd);
		}
		memalloc_log_clear(&log);
		for (j = 0; j < 14 && tc->release[j] != NULL; j++)
			cr_assert_eq(memalloc_release(a, tc->release[j], NULL),
			    0, "%s: release %s", tc->name, tc->release[j]);
	}
}

Test(memalloc, go_offer)
{
	struct memalloc		*a = build(2, t8, 4, NULL, &d2[0][0]);
	struct memalloc_req	 r1 = req("1", 1, B(0), 0, 0, BU);
	struct memalloc_req	 r2 = req("2", 1, B(1), 0, 0, BU);
	memmask_t		 zone;
	int			 moved;

	cr_assert_eq(memalloc_offer(a, &r1, &zone, &moved, NULL), 0);
	cr_assert_eq(zone, B(0));
	cr_assert_eq(moved, 0);
	cr_assert_eq(memalloc_offer(a, &r2, &zone, &moved, NULL), 0);
	cr_assert_eq(zone, B(1));
	cr_assert_eq(memalloc_nrequests(a), 0);
	cr_assert_eq(memalloc_zone_usage(a, B(0) | B(1)), 0);
	cr_assert_eq(memalloc_allocate(a, &r1, NULL, &zone, NULL), 0);
	cr_assert_eq(zone, B(0));
	memalloc_free(a);
}

Test(memalloc, go_offer_invalidation)
{
	struct memalloc		*a = build8();
	struct memalloc_req	 r1 = req("1", 2, B(0), DRAM, 0, BU);
	struct memalloc_req	 r2 = req("2", 2, B(1), DRAM, 0, BU);
	struct memalloc_req	 r3 = req("3", 2, B(3), DRAM, 0, BU);
	memmask_t		 zone;

	/* Offers are not kept here: an offer is what an allocation now
	 * would give, and committing is allocating. */
	cr_assert_eq(memalloc_offer(a, &r1, &zone, NULL, NULL), 0);
	cr_assert_eq(zone, B(0));
	cr_assert_eq(memalloc_offer(a, &r2, &zone, NULL, NULL), 0);
	cr_assert_eq(zone, B(1));
	cr_assert_eq(memalloc_allocate(a, &r1, NULL, &zone, NULL), 0);
	cr_assert_eq(memalloc_offer(a, &r3, &zone, NULL, NULL), 0);
	cr_assert_eq(zone, B(3));
	cr_assert_eq(memalloc_release(a, "1", NULL), 0);
	cr_assert_eq(memalloc_nrequests(a), 0);
	memalloc_free(a);
}

Test(memalloc, go_expand)
{
	static const struct {
		const char	*name;
		memmask_t	 start;
		unsigned	 types;
		memmask_t	 steps[3];
	} tc[] = {
		{ "DRAM from #0", B(0), DRAM,
		    { B(1), B(2) | B(3) } },
		{ "PMEM from #0", B(0), PMEM,
		    { B(4), B(5), B(6) | B(7) } },
		{ "HBM from #0", B(0), HBM,
		    { B(8), B(9) | B(10) | B(11) } },
		{ "DRAM+PMEM from #0", B(0), DRAM | PMEM,
		    { B(1) | B(4), B(2) | B(3) | B(5), B(6) | B(7) } },
		{ "DRAM+HBM from #2", B(2), DRAM | HBM,
		    { B(3) | B(10), B(0) | B(1) | B(8) | B(9) | B(11) } },
		{ "DRAM+PMEM+HBM from #1", B(1), DRAM | PMEM | HBM,
		    { B(0) | B(5) | B(9),
		      B(2) | B(3) | B(4) | B(8) | B(10) | B(11),
		      B(6) | B(7) } },
	};
	struct memalloc	*a = build12();
	memmask_t	 zone, n;
	size_t		 i;
	int		 s;

	for (i = 0; i < sizeof tc / sizeof tc[0]; i++) {
		zone = tc[i].start;
		for (s = 0; s < 3 && tc[i].steps[s] != 0; s++) {
			n = memalloc_expand(a, zone, tc[i].types);
			cr_assert_eq(n, tc[i].steps[s], "%s, step %d: 0x%llx",
			    tc[i].name, s, (unsigned long long)n);
			zone |= n;
		}
		cr_assert_eq(memalloc_expand(a, zone, tc[i].types), 0,
		    "%s: expands past all", tc[i].name);
	}
	memalloc_free(a);
}

static const struct acase go_allocate[] = {
	{ REQ("too big allocation", "1", 33, DRAM, BE, 0, N0123), .fail = 1 },
	{ REQ("allocation with unavailable node", "1", 1, DRAM, BE, 0, B(10)),
	    .fail = 1 },
	{ REQ("allocation without affinity", "1", 1, DRAM, BE, 0, 0),
	    .fail = 1 },
	{ REQ("allocation with unavailable node type", "1", 1, HBM, BE, 0, 0),
	    .fail = 1 },
	{ REQ("2 bytes of DRAM from node #0", "1", 2, DRAM, BE, 0, B(0)),
	    .result = B(0) },
	{ REQ("allocation attempt with existing ID", "1", 1, DRAM, BE, 0, 0),
	    .fail = 1 },
	{ REQ("2 bytes of DRAM from node #2", "2", 2, DRAM, BE, 0, B(2)),
	    .result = B(2) },
	{ REQ("2 bytes of DRAM from node #0", "3", 2, DRAM, BE, 0, B(0)),
	    .result = B(0) },
	{ REQ("2 bytes of DRAM from node #2", "4", 2, DRAM, BE, 0, B(2)),
	    .result = B(2) },
	{ REQ("2 bytes of DRAM, guaranteed from node #0", "5", 2, DRAM, GU, 0,
	    B(0)), .result = B(0), .updates = { { "3", N0123 } } },
	{ REQ("2 bytes of DRAM, guaranteed from node #2", "6", 2, DRAM, GU, 0,
	    B(2)), .result = B(2), .updates = { { "4", N0123 } } },
	{ REQ("2 bytes of DRAM, guaranteed from node #0", "7", 2, DRAM, GU, 0,
	    B(0)), .result = B(0), .updates = { { "1", N0123 } } },
	{ REQ("2 bytes of DRAM, guaranteed from node #2", "8", 2, DRAM, GU, 0,
	    B(2)), .result = B(2), .updates = { { "2", N0123 } } },
	{ REQ("2 bytes of DRAM from node #1", "9", 2, DRAM, BU, 0, B(1)),
	    .result = B(1), .updates = { { "4", N0123 | N4567 } } },
	{ REQ("2 bytes of DRAM from node #3", "10", 2, DRAM, BU, 0, B(3)),
	    .result = B(3), .updates = { { "3", N0123 | N4567 } } },
	{ REQ("2 bytes of DRAM from node #1", "11", 2, DRAM, BU, 0, B(1)),
	    .result = B(1), .updates = { { "2", N0123 | N4567 } } },
	{ REQ("2 bytes of DRAM from node #3", "12", 2, DRAM, BU, 0, B(3)),
	    .result = B(3), .updates = { { "1", N0123 | N4567 } } },
	{ REQ("2 bytes of DRAM from node #1, then release all", "13", 2, DRAM,
	    BU, 0, B(1)), .result = N0123 | N4567,
	    .release = { "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
		"11", "12", "13" } },
	{ REQ("6 bytes of DRAM from nodes #0,2", "14", 6, DRAM, BU, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("3 bytes of DRAM from node #0", "15", 3, DRAM, BU, 0, B(0)),
	    .result = B(0), .updates = { { "14", N0123 } },
	    .release = { "14", "15" } },
	{ REQ("4 bytes of DRAM from nodes #0,2, preserved", "16", 4, 0, PR, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("4 bytes of DRAM from node #0,2", "17", 4, DRAM, BU, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("1 byte of DRAM from node #0", "18", 1, DRAM, BU, 0, B(0)),
	    .result = B(0), .updates = { { "17", N0123 } },
	    .release = { "16", "17", "18" } },
	{ REQ("8 bytes of DRAM from nodes #0,1,2,3, strict", "19", 8, DRAM,
	    BU, 1, N0123), .result = N0123 },
	{ REQ("8 bytes of DRAM from node #0,1,2,3", "20", 8, DRAM, BU, 0,
	    N0123), .result = N0123 },
	{ REQ("1 byte of DRAM from node #0", "21", 1, DRAM, BU, 0, B(0)),
	    .result = B(0), .updates = { { "20", N0123 | N4567 } },
	    .release = { "19", "20", "21" } },
	{ REQ("4 bytes of DRAM from nodes #0, preserved", "22", 4, 0, PR, 0,
	    B(0)), .result = B(0) },
	{ REQ("4 bytes of DRAM from nodes #0,2", "23", 4, DRAM, BU, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("1 byte of DRAM from nodes #0,2", "24", 1, DRAM, BU, 0,
	    B(0) | B(2)), .result = N0123 },
};

Test(memalloc, go_allocate)
{
	struct memalloc	*a = build8();

	run_table(a, go_allocate, sizeof go_allocate / sizeof go_allocate[0]);
	memalloc_free(a);
}

static const struct acase go_preserved[] = {
	{ REQ("4 bytes of DRAM from nodes #0,2, preserved", "16", 4, 0, PR, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("4 bytes of DRAM from node #0,2", "17", 4, DRAM, BU, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("1 byte of DRAM from node #0", "18", 1, DRAM, BU, 0, B(0)),
	    .result = B(0), .updates = { { "17", N0123 } },
	    .release = { "16", "17", "18" } },
	{ REQ("4 bytes of DRAM from nodes #0, preserved", "22", 4, 0, PR, 0,
	    B(0)), .result = B(0) },
	{ REQ("4 bytes of DRAM from nodes #0,2", "23", 4, DRAM, BU, 0,
	    B(0) | B(2)), .result = B(0) | B(2) },
	{ REQ("1 byte of DRAM from nodes #0,2", "24", 1, DRAM, BU, 0,
	    B(0) | B(2)), .result = N0123 },
};

Test(memalloc, go_preserved)
{
	struct memalloc	*a = build8();

	run_table(a, go_preserved, sizeof go_preserved /
	    sizeof go_preserved[0]);
	memalloc_free(a);
}

static const struct acase go_strict[] = {
	{ REQ("1 byte of PMEM, affinity to nodes #0, strict", "1", 1, PMEM,
	    BU, 1, B(0)), .result = B(4), .release = { "1" } },
	{ REQ("8 bytes of HBMEM, affinity to nodes #0, strict", "19", 8, HBM,
	    BU, 1, B(0)), .fail = 1 },
	{ REQ("8 bytes of DRAM from nodes #0,1,2,3, strict", "19", 8, DRAM,
	    BU, 1, N0123), .result = N0123 },
	{ REQ("8 bytes of DRAM from node #0,1,2,3", "20", 8, DRAM, BU, 0,
	    N0123), .result = N0123 },
	{ REQ("1 byte of DRAM from node #0", "21", 1, DRAM, BU, 0, B(0)),
	    .result = B(0), .updates = { { "20", N0123 | N4567 } } },
};

Test(memalloc, go_strict)
{
	struct memalloc	*a = build8();

	run_table(a, go_strict, sizeof go_strict / sizeof go_strict[0]);
	memalloc_free(a);
}

static const struct acase go_normal[] = {
	{ REQ("4 bytes of PMEM from node #4", "1", 4, PMEM, BU, 0, B(4)),
	    .result = B(0) | B(4), .release = { "1" } },
	{ REQ("4 bytes of PMEM from node #6", "2", 4, PMEM, BU, 0, B(6)),
	    .result = B(1) | B(6), .release = { "2" } },
	{ REQ("4 bytes of PMEM from node #5", "3", 4, PMEM, BU, 0, B(5)),
	    .result = B(2) | B(5), .release = { "3" } },
	{ REQ("1 byte of PMEM from node #4, strict, should fail", "18", 1,
	    PMEM, BU, 1, B(4)), .fail = 1 },
};

Test(memalloc, go_normal_memory)
{
	struct memalloc	*a = build8_movable();

	run_table(a, go_normal, sizeof go_normal / sizeof go_normal[0]);
	memalloc_free(a);
}

Test(memalloc, go_realloc)
{
	static const struct {
		const char	*name;
		const char	*id;
		long long	 limit;
		unsigned	 types;
		memmask_t	 affinity;
		memmask_t	 result;
		memmask_t	 nodes;
		unsigned	 newtypes;
		memmask_t	 realloced;
		int		 reset;
	} tc[] = {
		{ "DRAM #0, realloced to use also node #1", "1", 2, DRAM,
		    B(0), B(0), B(1), 0, N0123, 0 },
		{ "then to the subset node #0", "1", 0, 0, 0, 0, B(0), 0,
		    N0123, 0 },
		{ "then to the subset nodes #0,1,3", "1", 0, 0, 0, 0,
		    B(0) | B(1) | B(3), 0, N0123, 0 },
		{ "then to the same type DRAM", "1", 0, 0, 0, 0, 0, DRAM,
		    N0123, 1 },
		{ "DRAM #0, realloced to DRAM+PMEM", "2", 2, DRAM, B(0),
		    B(0), 0, PMEM, B(0) | B(4), 0 },
		{ "then to the subset DRAM", "2", 0, 0, 0, 0, 0, DRAM,
		    B(0) | B(4), 0 },
		{ "then to the subset PMEM", "2", 0, 0, 0, 0, 0, PMEM,
		    B(0) | B(4), 0 },
		{ "then to the same DRAM+PMEM", "2", 0, 0, 0, 0, 0,
		    DRAM | PMEM, B(0) | B(4), 0 },
		{ "DRAM #1, realloced to DRAM+PMEM", "3", 2, DRAM, B(1),
		    B(1), 0, PMEM, B(1) | B(6), 0 },
		{ "DRAM #0,2, realloced to DRAM+PMEM", "4", 2, DRAM,
		    B(0) | B(2), B(0) | B(2), 0, PMEM,
		    B(0) | B(2) | B(4) | B(5), 0 },
	};
	struct memalloc	*a = build8();
	memmask_t	 zone;
	char		*err = NULL;
	size_t		 i;

	for (i = 0; i < sizeof tc / sizeof tc[0]; i++) {
		if (tc[i].affinity != 0)
			alloc_ok(a, tc[i].id, tc[i].limit, tc[i].affinity,
			    tc[i].types, 0, BU, tc[i].result, NULL);
		cr_assert_eq(memalloc_realloc(a, tc[i].id, tc[i].nodes,
		    tc[i].newtypes, NULL, &zone, &err), 0, "%s: %s",
		    tc[i].name, err ? err : "");
		cr_assert_eq(zone, tc[i].realloced, "%s: 0x%llx", tc[i].name,
		    (unsigned long long)zone);
		cr_assert_eq(memalloc_zone_of(a, tc[i].id), tc[i].realloced);
		if (tc[i].reset)
			cr_assert_eq(memalloc_release(a, tc[i].id, NULL), 0);
	}
	cr_assert_eq(memalloc_realloc(a, "nope", B(1), 0, NULL, &zone, &err),
	    -1);
	free(err);
	memalloc_free(a);
}

Test(memalloc, new_rejects)
{
	struct memalloc_node	 nodes[65];
	static const int	 row[65];
	static const int	 same[2][2] = { { 10, 10 }, { 10, 10 } };
	char			*err = NULL;
	int			 i;

	memset(nodes, 0, sizeof nodes);
	for (i = 0; i < 65; i++) {
		nodes[i].id = i;
		nodes[i].capacity = 4;
		nodes[i].normal = 1;
		nodes[i].distance = row;
		nodes[i].ndistance = 65;
	}
	cr_assert_null(memalloc_new(nodes, 65, &err));
	cr_assert_not_null(err);
	free(err);
	err = NULL;

	/* A row of the wrong length. */
	nodes[0].distance = &d2[0][0];
	nodes[0].ndistance = 2;
	nodes[1].distance = &d2[1][0];
	nodes[1].ndistance = 3;
	cr_assert_null(memalloc_new(nodes, 2, &err));
	cr_assert(err != NULL && strstr(err, "3 distances for 2") != NULL,
	    "%s", err ? err : "");
	free(err);
	err = NULL;

	/* A node that is not nearest to itself alone. */
	nodes[0].distance = same[0];
	nodes[1].distance = same[1];
	nodes[1].ndistance = 2;
	cr_assert_null(memalloc_new(nodes, 2, &err));
	cr_assert_not_null(err);
	free(err);
	err = NULL;

	nodes[0].distance = &d2[0][0];
	nodes[1].distance = &d2[1][0];
	nodes[1].type = 7;
	cr_assert_null(memalloc_new(nodes, 2, &err));
	cr_assert_not_null(err);
	free(err);
	nodes[1].type = MEM_TYPE_PMEM;
	memalloc_free(memalloc_new(nodes, 2, NULL));
}

/* Rows are copied; accessors answer for the nodes given. */
Test(memalloc, nodes_and_zones)
{
	struct memalloc			*a = build8_movable();
	const struct memalloc_node	*n;

	cr_assert_eq(memalloc_nnodes(a), 8);
	n = memalloc_node(a, 5);
	cr_assert_not_null(n);
	cr_assert_eq(n->type, MEM_TYPE_PMEM);
	cr_assert_eq(n->distance[2], 17);
	cr_assert_null(memalloc_node(a, 8));
	cr_assert_eq(memalloc_types(a), DRAM | PMEM);
	cr_assert_eq(memalloc_zone_types(a, B(0) | B(4)), DRAM | PMEM);
	cr_assert_eq(memalloc_zone_capacity(a, N0123 | N4567), 32);
	alloc_ok(a, "a", 3, B(0), DRAM, 0, BU, B(0), NULL);
	alloc_ok(a, "b", 5, B(0) | B(2), DRAM, 0, BU, B(0) | B(2), NULL);
	cr_assert_eq(memalloc_zone_usage(a, B(0)), 3);
	cr_assert_eq(memalloc_zone_usage(a, B(0) | B(2)), 8);
	cr_assert_eq(memalloc_zone_usage(a, B(2)), 0);
	cr_assert_eq(memalloc_zone_free(a, B(0)), 1);
	cr_assert_eq(memalloc_zone_free(a, B(2)), 4);
	/* Node 2 has 4 free, but the zone it is in has no room left. */
	cr_assert_eq(memalloc_zone_available(a, B(2)), 0);
	cr_assert_eq(memalloc_zone_available(a, N0123), 8);
	cr_assert_eq(memalloc_size_of(a, "b"), 5);
	cr_assert_eq(memalloc_nrequests(a), 2);
	memalloc_free(a);
}

/* The smaller request moves first, then the younger of two equal. */
Test(memalloc, shrink_order)
{
	struct memalloc	*a = build8();

	alloc_ok(a, "a", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "b", 1, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "c", 2, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0));
	cr_assert_eq(memalloc_zone_of(a, "b"), B(0) | B(2));
	memalloc_free(a);

	a = build8();
	alloc_ok(a, "a", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "b", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "c", 1, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0));
	cr_assert_eq(memalloc_zone_of(a, "b"), B(0) | B(2));
	memalloc_free(a);
}

/* Lower priority moves first; reservations never move. */
Test(memalloc, priorities)
{
	struct memalloc		*a = build8();
	struct memalloc_req	 r;
	char			*err = NULL;

	/* "a" is smaller, but Burstable. */
	alloc_ok(a, "a", 1, B(0), DRAM, 0, BU, B(0), NULL);
	alloc_ok(a, "b", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "c", 2, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0));
	cr_assert_eq(memalloc_zone_of(a, "b"), B(0) | B(2));
	memalloc_free(a);

	a = build8();
	alloc_ok(a, "a", 3, B(0), DRAM, 0, RS, B(0), NULL);
	/* The new request itself is the one to move. */
	alloc_ok(a, "b", 2, B(0), DRAM, 0, PR, B(0) | B(2), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0));
	cr_assert_eq(memalloc_zone_of(a, "b"), B(0) | B(2));
	memalloc_free(a);

	/* Only a reservation could make room: the allocation fails. */
	a = build(2, t8, 4, NULL, &d2[0][0]);
	alloc_ok(a, "a", 8, B(0) | B(1), DRAM, 0, RS, B(0) | B(1), NULL);
	r = req("b", 1, B(0), DRAM, 0, BE);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, NULL, &err), -1);
	cr_assert(err != NULL && strstr(err, "0-1") != NULL &&
	    strstr(err, "by 1 bytes") != NULL, "%s", err ? err : "");
	free(err);
	cr_assert_eq(memalloc_nrequests(a), 1);
	cr_assert_eq(memalloc_zone_usage(a, B(0) | B(1)), 8);
	memalloc_free(a);
}

/*
 * Overcommitted zones with as many users are shrunk subzone first: "a"
 * leaves {0} for {0,2}, where it is then the first to move on. Shrinking
 * {0,2} first would move "q" out and leave "a" in {0,2}.
 */
Test(memalloc, subzones_first)
{
	struct memalloc	*a = build8();

	alloc_ok(a, "p", 2, B(0) | B(2), DRAM, 0, BE, B(0) | B(2), NULL);
	alloc_ok(a, "q", 2, B(0) | B(2), DRAM, 0, BE, B(0) | B(2), NULL);
	alloc_ok(a, "a", 1, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "n", 4, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), N0123);
	cr_assert_eq(memalloc_zone_of(a, "p"), B(0) | B(2));
	cr_assert_eq(memalloc_zone_of(a, "q"), B(0) | B(2));
	memalloc_free(a);
}

/* A strict request moves only to a zone of exactly its types. */
Test(memalloc, strict_moves)
{
	struct memalloc	*a = build8();

	alloc_ok(a, "a", 4, N0123, DRAM, 1, BE, N0123, NULL);
	alloc_ok(a, "b", 8, N0123, DRAM, 0, BE, N0123, NULL);
	alloc_ok(a, "c", 8, N0123, DRAM, 0, GU, N0123, NULL);
	/* "a" is smaller and younger, but DRAM only: "b" went to PMEM. */
	cr_assert_eq(memalloc_zone_of(a, "a"), N0123);
	cr_assert_eq(memalloc_zone_of(a, "b"), N0123 | N4567);
	memalloc_free(a);
}

/*
 * Revert puts back what allocate (with moves), realloc and release did,
 * one log over them all, and each alone.
 */
Test(memalloc, revert)
{
	struct memalloc		*a = build8();
	struct memalloc_log	 log = { 0 };
	struct snap		*s0, *s1;

	alloc_ok(a, "1", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "2", 2, B(2), DRAM, 0, BE, B(2), NULL);
	alloc_ok(a, "3", 2, B(0), DRAM, 0, BE, B(0), NULL);
	s0 = snapshot(a);

	alloc_ok(a, "5", 2, B(0), DRAM, 0, GU, B(0), &log);
	cr_assert_eq(log.n, 2);
	cr_assert_eq(logged(&log, "3"), (long long)(B(0) | B(2)));
	cr_assert_eq(log.v[1].zone, B(0));
	cr_assert(log.v[0].present == 0 && strcmp(log.v[0].id, "5") == 0);
	s1 = snapshot(a);
	memalloc_revert(a, &log);
	cr_assert_eq(log.n, 0);
	cr_assert_null(log.v);
	assert_same(snapshot(a), s0, "after allocate");
	s0 = snapshot(a);

	/* Again, and then more on the same log: newest first. */
	alloc_ok(a, "5", 2, B(0), DRAM, 0, GU, B(0), &log);
	assert_same(snapshot(a), s1, "allocate again");
	cr_assert_eq(memalloc_realloc(a, "2", 0, PMEM, &log, NULL, NULL), 0);
	cr_assert_eq(memalloc_zone_of(a, "2"), B(2) | B(5));
	cr_assert_eq(memalloc_release(a, "1", &log), 0);
	cr_assert_eq(memalloc_release(a, "5", &log), 0);
	cr_assert_eq(logged(&log, "5"), 0);
	cr_assert_eq(logged(&log, "1"), 0);
	cr_assert_eq(log.n, 4);
	alloc_ok(a, "5", 1, B(1), DRAM, 0, BE, B(1), &log);
	cr_assert_eq(log.n, 4);
	cr_assert_eq(logged(&log, "5"), (long long)B(1));
	memalloc_revert(a, &log);
	assert_same(snapshot(a), s0, "after a log of five changes");
	/* The types came back too: DRAM only, so asking for DRAM+PMEM
	 * again is news and widens by both. */
	cr_assert_eq(memalloc_realloc(a, "2", B(2), DRAM | PMEM, NULL, NULL,
	    NULL), 0);
	cr_assert_eq(memalloc_zone_of(a, "2"), B(0) | B(2) | B(5));
	memalloc_free(a);
}

Test(memalloc, revert_realloc_release)
{
	struct memalloc		*a = build8();
	struct memalloc_log	 log = { 0 };
	struct snap		*s0;
	memmask_t		 zone;

	alloc_ok(a, "a", 3, B(0), DRAM, 0, BU, B(0), NULL);
	alloc_ok(a, "b", 4, B(1), DRAM, 0, BE, B(1), NULL);
	s0 = snapshot(a);
	cr_assert_eq(memalloc_realloc(a, "a", B(1), 0, &log, &zone, NULL), 0);
	/* a widens to 0-3; 0-3 holds 7 of 16: nothing else moves. */
	cr_assert_eq(zone, N0123);
	cr_assert_eq(log.n, 1);
	memalloc_revert(a, &log);
	assert_same(snapshot(a), s0, "after realloc");

	s0 = snapshot(a);
	cr_assert_eq(memalloc_release(a, "b", &log), 0);
	cr_assert_eq(memalloc_release(a, "b", &log), -1);
	cr_assert_eq(memalloc_nrequests(a), 1);
	memalloc_revert(a, &log);
	assert_same(snapshot(a), s0, "after release");
	memalloc_free(a);
}

/* A failed allocation leaves state and the caller's log as they were. */
Test(memalloc, failed_allocate)
{
	struct memalloc		*a = build8();
	struct memalloc_log	 log = { 0 };
	struct memalloc_req	 r;
	struct snap		*s0;
	memmask_t		 zone = 1;
	char			*err = NULL;

	alloc_ok(a, "1", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "2", 8, N0123, DRAM, 0, BE, N0123, &log);
	cr_assert_eq(log.n, 1);
	s0 = snapshot(a);
	/* Moves "1" and "2" before it finds 33 bytes cannot fit. */
	r = req("3", 23, B(0), DRAM, 0, GU);
	cr_assert_eq(memalloc_allocate(a, &r, &log, &zone, &err), -1);
	cr_assert_not_null(err);
	free(err);
	cr_assert_eq(zone, 0);
	cr_assert_eq(log.n, 1);
	cr_assert_eq(log.v[0].after, N0123);
	assert_same(snapshot(a), s0, "after a failed allocate");
	r = req("4", 1, B(0), HBM, 1, BE);
	cr_assert_eq(memalloc_allocate(a, &r, &log, &zone, NULL), -1);
	cr_assert_eq(log.n, 1);
	memalloc_revert(a, &log);
	cr_assert_eq(memalloc_nrequests(a), 1);
	cr_assert_eq(memalloc_zone_usage(a, N0123 | N4567), 2);
	memalloc_free(a);
}

/* An offer tells what allocating would do, and changes nothing. */
Test(memalloc, offer_changes_nothing)
{
	struct memalloc		*a = build8();
	struct memalloc_req	 r;
	struct snap		*s0;
	memmask_t		 zone;
	int			 moved;

	alloc_ok(a, "1", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "2", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "3", 4, B(0) | B(2), DRAM, 0, BE, B(0) | B(2), NULL);
	s0 = snapshot(a);
	r = req("4", 3, B(0), DRAM, 0, GU);
	cr_assert_eq(memalloc_offer(a, &r, &zone, &moved, NULL), 0);
	cr_assert_eq(zone, B(0));
	cr_assert_eq(moved, 2);
	assert_same(snapshot(a), s0, "after an offer");
	s0 = snapshot(a);
	r = req("4", 30, B(0), DRAM, 0, GU);
	cr_assert_eq(memalloc_offer(a, &r, &zone, &moved, NULL), -1);
	cr_assert_eq(zone, 0);
	assert_same(snapshot(a), s0, "after a failed offer");
	/* And allocating gives what was offered. */
	r = req("4", 3, B(0), DRAM, 0, GU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, NULL), 0);
	cr_assert_eq(zone, B(0));
	memalloc_free(a);
}

/* A copy is a state of its own. */
Test(memalloc, dup)
{
	struct memalloc	*a = build8(), *b;
	struct snap	*sa;

	alloc_ok(a, "1", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "2", 2, B(0), DRAM, 0, BE, B(0), NULL);
	b = memalloc_dup(a);
	assert_same(snapshot(a), snapshot(b), "copy");
	sa = snapshot(a);
	alloc_ok(b, "3", 2, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(b, "2"), B(0) | B(2));
	cr_assert_eq(memalloc_release(b, "1", NULL), 0);
	assert_same(snapshot(a), sa, "original");
	memalloc_free(a);
	/* The copy stands alone once the original is gone. */
	cr_assert_eq(memalloc_zone_of(b, "3"), B(0));
	cr_assert_eq(memalloc_node(b, 1)->distance[3], 11);
	alloc_ok(b, "4", 1, B(1), DRAM, 0, BE, B(1), NULL);
	cr_assert_eq(memalloc_nrequests(b), 3);
	memalloc_free(b);
}

/*
 * The same requests give the same zones whatever came before: on a
 * fresh allocator, on a copy, after offers and reverted logs, and after
 * zones emptied and refilled.
 */
static void
sequence(struct memalloc *a)
{
	alloc_ok(a, "a", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "b", 2, B(2), DRAM, 0, BE, B(2), NULL);
	alloc_ok(a, "c", 2, B(0), DRAM, 0, BE, B(0), NULL);
	alloc_ok(a, "d", 2, B(2), DRAM, 0, BE, B(2), NULL);
	alloc_ok(a, "e", 3, B(0), DRAM, 0, GU, B(0), NULL);
	alloc_ok(a, "f", 3, B(2), DRAM, 0, GU, B(2), NULL);
	alloc_ok(a, "g", 4, B(1), DRAM, 0, BU, B(1), NULL);
	alloc_ok(a, "h", 4, B(3), DRAM, 0, BU, B(3), NULL);
}

Test(memalloc, determinism)
{
	struct memalloc		*a = build8(), *b = build8(), *c;
	struct memalloc_log	 log = { 0 };
	struct memalloc_req	 r;
	unsigned long long	 s = seq;
	int			 i;

	sequence(a);
	/* b: other zones come and go first, offers are made. */
	for (i = 0; i < 3; i++) {
		alloc_ok(b, "1", 3, B(1) | B(3), DRAM, 0, BE, B(1) | B(3),
		    &log);
		alloc_ok(b, "2", 4, B(1), DRAM, 0, GU, B(1), &log);
		r = req("3", 5, B(2), PMEM, 0, BU);
		cr_assert_eq(memalloc_offer(b, &r, NULL, NULL, NULL), 0);
		memalloc_revert(b, &log);
	}
	seq = s;
	c = memalloc_dup(b);
	sequence(b);
	seq = s;
	sequence(c);
	assert_same(snapshot(a), snapshot(b), "after churn");
	assert_same(snapshot(a), snapshot(c), "on a copy");
	memalloc_free(a);
	memalloc_free(b);
	memalloc_free(c);
}

Test(memalloc, restore)
{
	struct memalloc		*a = build8();
	struct memalloc_req	 r;
	char			*err = NULL;

	/* Saved state comes back as it was, overcommitted or not. */
	r = req("a", 6, B(0), DRAM, 0, BU);
	cr_assert_eq(memalloc_restore(a, &r, B(0), NULL), 0);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0));
	cr_assert_eq(memalloc_zone_free(a, B(0)), -2);
	cr_assert_eq(memalloc_restore(a, &r, B(1), &err), -1);
	free(err);
	r = req("b", 1, B(0), DRAM, 0, BU);
	cr_assert_eq(memalloc_restore(a, &r, B(9), &err), -1);
	free(err);
	/* The next allocation touching it resolves it. */
	alloc_ok(a, "b", 1, B(1), DRAM, 0, BU, B(1), NULL);
	alloc_ok(a, "c", 1, B(0), DRAM, 0, GU, B(0), NULL);
	cr_assert_eq(memalloc_zone_of(a, "a"), B(0) | B(2));
	memalloc_free(a);
}

/* Requests that ask for what they do not say. */
Test(memalloc, validation)
{
	struct memalloc		*a = build8();
	struct memalloc_req	 r;
	memmask_t		 zone;
	char			*err = NULL;

	/* Types not present are dropped unless strict; none left is the
	 * affinity's. */
	r = req("a", 1, B(4), HBM, 0, BU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, NULL), 0);
	cr_assert_eq(zone, B(4));
	r = req("b", 1, B(4), HBM | DRAM, 1, BU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, &err), -1);
	free(err);
	/* A preferred type the affinity lacks comes from close by. */
	r = req("c", 1, B(1), PMEM, 0, BU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, NULL), 0);
	cr_assert_eq(zone, B(6));
	r = req("d", 1, B(1), DRAM | PMEM, 0, BU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, NULL), 0);
	cr_assert_eq(zone, B(1) | B(6));
	r = req("e", -1, B(1), DRAM, 0, BU);
	cr_assert_eq(memalloc_allocate(a, &r, NULL, &zone, &err), -1);
	free(err);
	cr_assert_eq(memalloc_realloc(a, "d", B(12), 0, NULL, &zone, &err),
	    -1);
	free(err);
	memalloc_free(a);
}
