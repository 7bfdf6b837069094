/*
 * test_nrtdoc.c: the NodeResourceTopology content (R-NRT, anchor §8) on
 * the recorded server with CPUs 3 and 11 reserved. Node k holds the CPUs
 * congruent to k mod 4, CPUs 4-7 and 60-63 are isolated, sockets hold
 * nodes {0,2} and {1,3}. Expected numbers are counted here from those
 * sets, and memory and distances are read from the recorded sysfs files.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nrtdoc.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define NCPUS		112
#define ISOLATED	"4-7,60-63"
#define RESERVED	"3,11"

static struct env	 e;
static json_t		*doc;

/* Post-order, as anchor §1.1 derives it for this machine. */
static const char *names[] = {
	"NUMA node #0", "NUMA node #2", "socket #0", "NUMA node #1",
	"NUMA node #3", "socket #1", "root"
};
static const char *types[] = {
	"numa node", "numa node", "socket", "numa node", "numa node",
	"socket", "virtual node"
};
static const char *parents[] = {
	"socket #0", "socket #0", "root", "socket #1", "socket #1", "root",
	NULL
};
/* The NUMA nodes under each pool, by the same index. */
static const char *nodes_of[] = { "0", "2", "0,2", "1", "3", "1,3", "0-3" };
/* Memory nodes: PMEM node 4 sits nearest node 0, node 5 nearest node 2. */
static const char *mems_of[] = { "0,4", "2,5", "0,2,4-5", "1", "3", "1,3",
    "0-5" };
#define NPOOLS	(sizeof names / sizeof names[0])

static void
setup(void)
{
	env_open(&e, testlib_machine("server"),
	    "{\"reservedResources\":{\"cpu\":\"cpuset:" RESERVED "\"}}");
	doc = NULL;
}

static void
teardown(void)
{
	json_decref(doc);
	env_close(&e);
}

TestSuite(nrtdoc, .init = setup, .fini = teardown);

static void
rebuild(void)
{
	json_decref(doc);
	doc = nrtdoc_build(e.P);
	cr_assert_not_null(doc);
}

static int
pool_index(const char *name)
{
	size_t	i;

	for (i = 0; i < NPOOLS; i++)
		if (strcmp(names[i], name) == 0)
			return ((int)i);
	cr_assert_fail("no pool %s", name);
	return (-1);
}

static json_t *
zone(const char *name)
{
	json_t	*z;
	size_t	 i;

	json_array_foreach(json_object_get(doc, "zones"), i, z)
		if (strcmp(json_string_value(json_object_get(z, "name")),
		    name) == 0)
			return (z);
	cr_assert_fail("no zone %s", name);
	return (NULL);
}

static const char *
resource(const char *zname, const char *rname, const char *field)
{
	json_t	*r;
	size_t	 i;

	json_array_foreach(json_object_get(zone(zname), "resources"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "name")),
		    rname) == 0) {
			cr_assert(json_is_string(json_object_get(r, field)),
			    "%s %s has no string %s", zname, rname, field);
			return (json_string_value(json_object_get(r, field)));
		}
	cr_assert_fail("zone %s has no resource %s", zname, rname);
	return (NULL);
}

/* The attribute's value, or NULL when the zone has none of that name. */
static const char *
attribute(const char *zname, const char *aname)
{
	json_t	*a;
	size_t	 i;

	json_array_foreach(json_object_get(zone(zname), "attributes"), i, a)
		if (strcmp(json_string_value(json_object_get(a, "name")),
		    aname) == 0)
			return (json_string_value(json_object_get(a, "value")));
	return (NULL);
}

/* All CPUs of the nodes listed, less the ones in less (may be NULL). */
static struct cpuset *
cpus_of(const char *nodes, const struct cpuset *less)
{
	struct cpuset	*n = testlib_set(nodes), *s = cpuset_new();
	int		 cpu;

	for (cpu = 0; cpu < NCPUS; cpu++)
		if (cpuset_has(n, cpu % 4) && (less == NULL ||
		    !cpuset_has(less, cpu)))
			cpuset_add(s, cpu);
	cpuset_free(n);
	return (s);
}

/* The quantity as the object writes it: whole CPUs or milli. */
static char *
quantity(long long milli)
{
	char	*s;

	if (milli % 1000 == 0)
		xasprintf(&s, "%lld", milli / 1000);
	else
		xasprintf(&s, "%lldm", milli);
	return (s);
}

static void
assert_quantity(const char *zname, const char *field, long long milli)
{
	char	*want = quantity(milli);

	cr_assert_str_eq(resource(zname, "cpu", field), want,
	    "%s cpu %s is %s, expected %s", zname, field,
	    resource(zname, "cpu", field), want);
	free(want);
}

/*
 * cpu available in every zone when taken (may be NULL) is gone from the
 * free sets and shared_milli is granted from the pool named grant_pool.
 */
static void
assert_available(const struct cpuset *taken, const char *grant_pool,
    long long shared_milli)
{
	struct cpuset	*gone, *free_cpus;
	long long	 own[NPOOLS], want;
	int		 i, a, g = grant_pool ? pool_index(grant_pool) : -1;

	gone = testlib_set(ISOLATED "," RESERVED);
	if (taken != NULL)
		cpuset_or(gone, taken);
	for (i = 0; i < (int)NPOOLS; i++) {
		free_cpus = cpus_of(nodes_of[i], gone);
		own[i] = 1000LL * cpuset_count(free_cpus);
		cpuset_free(free_cpus);
	}
	/* A shared grant counts in its pool and every pool above it. */
	for (a = g; a >= 0; a = parents[a] ? pool_index(parents[a]) : -1)
		own[a] -= shared_milli;
	/* No pool may grant more than any pool above it still has. */
	for (i = 0; i < (int)NPOOLS; i++) {
		want = own[i];
		for (a = i; a >= 0; a = parents[a] ? pool_index(parents[a]) : -1)
			if (own[a] < want)
				want = own[a];
		assert_quantity(names[i], "available", want);
	}
	cpuset_free(gone);
}

Test(nrtdoc, top_level_attributes)
{
	json_t	*a;

	rebuild();
	a = json_object_get(doc, "attributes");
	cr_assert_eq(json_array_size(a), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a,
	    0), "name")), "TopologyPolicy");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(a,
	    0), "value")), "topology-aware");
	cr_assert(json_is_array(json_object_get(doc, "zones")));
}

Test(nrtdoc, zones_in_post_order_with_types_and_parents)
{
	json_t	*zones, *z;
	size_t	 i;

	rebuild();
	zones = json_object_get(doc, "zones");
	cr_assert_eq(json_array_size(zones), NPOOLS);
	json_array_foreach(zones, i, z) {
		cr_assert_str_eq(json_string_value(json_object_get(z, "name")),
		    names[i]);
		cr_assert_str_eq(json_string_value(json_object_get(z, "type")),
		    types[i], "%s", names[i]);
		if (parents[i] == NULL)
			cr_assert_null(json_object_get(z, "parent"));
		else
			cr_assert_str_eq(json_string_value(json_object_get(z,
			    "parent")), parents[i], "%s", names[i]);
	}
}

Test(nrtdoc, cpu_capacity_leaves_out_isolated_cpus)
{
	struct cpuset	*iso = testlib_set(ISOLATED), *s;
	size_t		 i;

	rebuild();
	for (i = 0; i < NPOOLS; i++) {
		s = cpus_of(nodes_of[i], iso);
		assert_quantity(names[i], "capacity", 1000LL * cpuset_count(s));
		assert_quantity(names[i], "allocatable",
		    1000LL * cpuset_count(s));
		cpuset_free(s);
	}
	/* Spot checks of the counting itself: 28 per node less one core. */
	cr_assert_str_eq(resource("NUMA node #3", "cpu", "capacity"), "26");
	cr_assert_str_eq(resource("root", "cpu", "capacity"), "104");
	cpuset_free(iso);
}

Test(nrtdoc, cpu_available_leaves_out_reserved_cpus)
{
	rebuild();
	assert_available(NULL, NULL, 0);
	cr_assert_str_eq(resource("NUMA node #3", "cpu", "available"), "24");
	cr_assert_str_eq(resource("NUMA node #0", "cpu", "available"), "26");
	cr_assert_str_eq(resource("root", "cpu", "available"), "102");
}

Test(nrtdoc, claim_takes_cpus_and_release_gives_them_back)
{
	struct cpuset	*node1, *want;
	const struct cpuset *held;
	char		*text;

	rebuild();
	cr_assert_eq(env_claim(&e, "u1", "cpudevnuma001=2"), 0, "%s",
	    e.cause ? e.cause : "");
	held = policy_claim_cpus(e.P, "u1");
	cr_assert_not_null(held);
	cr_assert_eq(cpuset_count(held), 2);
	node1 = cpus_of("1", NULL);
	cr_assert(cpuset_subset(held, node1), "claim not on node 1");
	rebuild();
	assert_available(held, NULL, 0);
	cr_assert_str_eq(resource("NUMA node #1", "cpu", "available"), "24");
	cr_assert_str_eq(resource("root", "cpu", "available"), "100");
	/* Capacity is static: a claim does not change it. */
	cr_assert_str_eq(resource("NUMA node #1", "cpu", "capacity"), "26");
	/* The shared cpuset no longer offers the claimed CPUs. */
	want = testlib_set(ISOLATED "," RESERVED);
	cpuset_or(want, held);
	cpuset_free(node1);
	node1 = cpus_of("1", want);
	text = cpuset_format(node1);
	cr_assert_str_eq(attribute("NUMA node #1", "shared cpuset"), text);
	free(text);

	env_reset(&e);
	cr_assert_eq(env_release(&e, "u1"), 0);
	rebuild();
	assert_available(NULL, NULL, 0);
	cr_assert_str_eq(resource("NUMA node #1", "cpu", "available"), "26");
	cpuset_free(node1);
	cpuset_free(want);
}

Test(nrtdoc, fractional_shared_grant_in_milli)
{
	json_t		*grants, *g;
	const char	*pool;
	size_t		 i;

	cr_assert_eq(env_create(&e, "c1", "BU", 1500, -1, NULL, NULL, NULL),
	    0, "%s", e.cause ? e.cause : "");
	grants = policy_grants_json(e.P);
	pool = NULL;
	json_array_foreach(grants, i, g)
		if (json_is_string(json_object_get(g, "id")) &&
		    strcmp(json_string_value(json_object_get(g, "id")),
		    "c1") == 0)
			pool = json_string_value(json_object_get(g, "pool"));
	cr_assert_not_null(pool);
	rebuild();
	assert_available(NULL, pool, 1500);
	/* The grant's pool and the root both lose one and a half CPUs. */
	cr_assert_str_eq(resource("root", "cpu", "available"), "100500m");
	cr_assert_not_null(strstr(resource(pool, "cpu", "available"),
	    "500m"));
	json_decref(grants);

	env_reset(&e);
	cr_assert_eq(env_remove(&e, "c1"), 0);
	rebuild();
	assert_available(NULL, NULL, 0);
}

Test(nrtdoc, exclusive_grant_is_not_available)
{
	const struct pinning	*pin;
	struct cpuset		*taken;

	cr_assert_eq(env_create(&e, "g1", "G", 3000, 3000, NULL, NULL, NULL),
	    0, "%s", e.cause ? e.cause : "");
	pin = policy_pinning(e.P, "g1");
	cr_assert_not_null(pin);
	cr_assert_eq(cpuset_count(&pin->cpus), 3);
	taken = cpuset_new();
	cpuset_copy(taken, &pin->cpus);
	rebuild();
	assert_available(taken, NULL, 0);
	cr_assert_str_eq(resource("root", "cpu", "available"), "99");
	cpuset_free(taken);
}

/* MemTotal of a recorded node in bytes, from its meminfo file. */
static unsigned long long
memtotal(int node)
{
	char			*path, *text, *p;
	unsigned long long	 kb;

	xasprintf(&path, "%s/sys/devices/system/node/node%d/meminfo",
	    testlib_sysfs("server"), node);
	text = testlib_read(path, NULL);
	p = strstr(text, "MemTotal:");
	cr_assert_not_null(p, "%s has no MemTotal", path);
	cr_assert_eq(sscanf(p, "MemTotal: %llu kB", &kb), 1);
	free(text);
	free(path);
	return (kb * 1024);
}

Test(nrtdoc, memory_of_the_pool_nodes)
{
	struct cpuset		*mems;
	unsigned long long	 sum;
	char			 want[32];
	size_t			 i;
	int			 n;

	rebuild();
	for (i = 0; i < NPOOLS; i++) {
		mems = testlib_set(mems_of[i]);
		sum = 0;
		CPUSET_FOREACH(n, mems)
			sum += memtotal(n);
		snprintf(want, sizeof want, "%llu", sum);
		cr_assert_str_eq(resource(names[i], "memory", "capacity"), want,
		    "%s", names[i]);
		cr_assert_str_eq(resource(names[i], "memory", "allocatable"),
		    want);
		cr_assert_str_eq(resource(names[i], "memory", "available"),
		    want);
		cr_assert_str_eq(attribute(names[i], "memory set"), mems_of[i]);
		cpuset_free(mems);
	}
	/* The PMEM nodes are large: they dominate node 0's zone. */
	cr_assert_gt(memtotal(4), memtotal(0));
}

Test(nrtdoc, cpuset_attributes)
{
	struct cpuset	*less, *s;
	char		*text;

	rebuild();
	less = testlib_set(ISOLATED "," RESERVED);
	s = cpus_of("0", less);
	text = cpuset_format(s);
	cr_assert_str_eq(attribute("NUMA node #0", "shared cpuset"), text);
	free(text);
	cpuset_free(s);
	cpuset_free(less);
	cr_assert_null(attribute("NUMA node #0", "reserved cpuset"));
	cr_assert_str_eq(attribute("NUMA node #3", "reserved cpuset"), RESERVED);
	cr_assert_str_eq(attribute("socket #1", "reserved cpuset"), RESERVED);
	cr_assert_str_eq(attribute("root", "reserved cpuset"), RESERVED);
	cr_assert_str_eq(attribute("NUMA node #0", "isolated cpuset"), "4,60");
	cr_assert_str_eq(attribute("socket #0", "isolated cpuset"),
	    "4,6,60,62");

	/* A claim of node 0's isolated core leaves it no isolated CPU. */
	cr_assert_eq(env_claim(&e, "u2", "cpudevnuma000=2,cpudevnuma000=3"),
	    0, "%s", e.cause ? e.cause : "");
	cr_assert(cpuset_has(policy_claim_cpus(e.P, "u2"), 4));
	cr_assert(cpuset_has(policy_claim_cpus(e.P, "u2"), 60));
	rebuild();
	cr_assert_null(attribute("NUMA node #0", "isolated cpuset"));
	cr_assert_str_eq(attribute("socket #0", "isolated cpuset"),
	    "4,6,60,62");
}

/* The distances of a recorded node, from its distance file. */
static void
distances(int node, int *d, int n)
{
	char	*path, *text, *p, *end;
	int	 i;

	xasprintf(&path, "%s/sys/devices/system/node/node%d/distance",
	    testlib_sysfs("server"), node);
	text = testlib_read(path, NULL);
	for (i = 0, p = text; i < n; i++, p = end) {
		d[i] = (int)strtol(p, &end, 10);
		cr_assert_neq(p, end, "%s: too short", path);
	}
	free(text);
	free(path);
}

Test(nrtdoc, numa_zones_carry_distances)
{
	json_t		*costs, *c;
	int		 d[6], node, seen;
	size_t		 i, j;
	const char	*name;

	rebuild();
	for (i = 0; i < NPOOLS; i++) {
		costs = json_object_get(zone(names[i]), "costs");
		if (strcmp(types[i], "numa node") != 0) {
			cr_assert_null(costs, "%s has costs", names[i]);
			continue;
		}
		node = names[i][strlen(names[i]) - 1] - '0';
		distances(node, d, 6);
		/* One cost per NUMA node zone, named by the zone. */
		cr_assert_eq(json_array_size(costs), 4, "%s", names[i]);
		seen = 0;
		json_array_foreach(costs, j, c) {
			name = json_string_value(json_object_get(c, "name"));
			cr_assert_not_null(name);
			cr_assert_eq(strncmp(name, "NUMA node #", 11), 0);
			cr_assert_eq(json_integer_value(json_object_get(c,
			    "value")), d[name[11] - '0'], "%s to %s",
			    names[i], name);
			seen |= 1 << (name[11] - '0');
		}
		cr_assert_eq(seen, 0xf);
	}
	cr_assert_eq(d[1], 11, "node 3 to node 1");
}
