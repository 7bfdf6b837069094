/*
 * test_cpualloc.c: the CPU allocator (R-ALLOC-1). The three tables of the
 * Go cpuallocator tests on the recorded 2-socket-4-node-40-core machine,
 * set up as upstream does (forced priorities, injected clusters), then
 * cases on the recorded server and on machines built here: idle cores
 * and packages, half-used cores, cache groups, priorities, errors.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpualloc.h"
#include "testlib.h"
#include "xmalloc.h"

/* Takes cnt CPUs and checks the result and what is left of from. */
static void
check_flags(const struct topology *t, const char *from_text, int cnt,
    enum cpu_prio prefer, unsigned flags, const char *want)
{
	struct cpuset	*from = testlib_set(from_text);
	struct cpuset	*left = testlib_set(from_text);
	struct cpuset	*expect = testlib_set(want);
	struct cpuset	 result = CPUSET_INITIALIZER;
	char		*cause = NULL;
	int		 rc;

	rc = cpualloc_take(t, from, cnt, prefer, flags, &result, &cause);
	cr_assert_eq(rc, 0, "%d CPUs of %s: %s", cnt, from_text,
	    cause ? cause : "?");
	cr_assert_null(cause);
	testlib_assert_set(&result, want);
	cr_assert_eq(cpuset_count(&result), cnt);
	cpuset_andnot(left, expect);
	cr_assert(cpuset_equal(from, left), "from keeps what was not taken");
	cpuset_clear(&result);
	cpuset_free(from);
	cpuset_free(left);
	cpuset_free(expect);
}

static void
check(const struct topology *t, const char *from_text, int cnt,
    enum cpu_prio prefer, const char *want)
{
	check_flags(t, from_text, cnt, prefer, CPUALLOC_ALL, want);
}

static void
set_prio(struct topology *t, const char *cpus, enum cpu_prio prio)
{
	struct cpuset	*s = testlib_set(cpus);

	topology_set_prio(t, s, prio);
	cpuset_free(s);
}

static void
set_cluster(struct topology *t, const char *cpus, int cluster)
{
	struct cpuset	*s = testlib_set(cpus);
	char		*cause = NULL;

	cr_assert_eq(topology_set_cluster(t, s, cluster, &cause), 0,
	    "cluster %s: %s", cpus, cause ? cause : "?");
	cpuset_free(s);
}

static void
set_kind(struct topology *t, const char *cpus, enum core_kind kind)
{
	struct cpuset	*s = testlib_set(cpus);

	topology_set_kind(t, s, kind);
	cpuset_free(s);
}

/* The clusters of upstream's tests, ids from 0 in each package. */
static const char *pkg0_clusters[] = {
	"0-3", "4-7", "8-11", "12-15", "16-19",
	"40-43", "44-47", "48-51", "52-55", "56-59"
};
static const char *pkg1_clusters[] = {
	"20,22,24,26", "21,23,25,27", "28-31", "32-35", "36-39",
	"60-63", "64-67", "68-71", "72-75", "76-79"
};
/* cluster2: 36-39 split into an E pair and a P pair, one more id. */
static const char *pkg1_clusters2[] = {
	"20,22,24,26", "21,23,25,27", "28-31", "32-35", "36-37", "38-39",
	"60-63", "64-67", "68-71", "72-75", "76-79"
};

static void
inject_clusters(struct topology *t, const char **pkg1, int n1)
{
	int	i;

	for (i = 0; i < 10; i++)
		set_cluster(t, pkg0_clusters[i], i);
	for (i = 0; i < n1; i++)
		set_cluster(t, pkg1[i], i);
}

#define PKG0	"0-19,40-59"
#define PKG1	"20-39,60-79"
#define ALL40	"0-79"

/* TestAllocatorHelper: five cores of package 0 forced HIGH. */
Test(cpualloc, upstream_allocator_helper)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");
	struct cpuset	*from = testlib_set("2,3,10-14,20");
	struct cpuset	*before = testlib_set("2,3,10-14,20");
	struct cpuset	*result = testlib_set("7");
	char		*cause = NULL;

	set_prio(t, "2,5,8,15,17,42,45,48,55,57", CPU_PRIO_HIGH);
	set_prio(t, "20-39,60-79", CPU_PRIO_NORMAL);
	set_prio(t, "0,1,3,4,6,7,9-14,16,18,19,40,41,43,44,46,47,49-54,56,"
	    "58,59", CPU_PRIO_LOW);

	/* Too few: upstream returns an empty set, we an error. */
	cr_assert_eq(cpualloc_take(t, from, 9, CPU_PRIO_NORMAL, CPUALLOC_ALL,
	    result, &cause), -ENOSPC);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "9"), "cause \"%s\"", cause);
	cr_assert(cpuset_equal(from, before), "from unchanged on error");
	testlib_assert_set(result, "7");
	free(cause);

	check(t, "2,3,10-14,20", 8, CPU_PRIO_NORMAL, "2-3,10-14,20");
	check(t, "2,3,10-25", 4, CPU_PRIO_HIGH, "2-3,15,17");

	cpuset_free(from);
	cpuset_free(before);
	cpuset_free(result);
	topology_free(t);
}

/*
 * TestClusteredAllocation: every CPU HIGH, the allocator's default
 * preference (HIGH) kept. Upstream's injected clusters are P-clusters of
 * a hybrid machine; ours keep the recorded core kinds, which only hides
 * the four E-clusters from a HIGH request and changes no answer below.
 */
Test(cpualloc, upstream_clustered_allocation)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");

	cr_assert(topology_hybrid(t), "the recorded tree is hybrid");
	set_prio(t, ALL40, CPU_PRIO_HIGH);
	inject_clusters(t, pkg1_clusters, 10);

	check(t, PKG0, 4, CPU_PRIO_HIGH, "0-3");
	check(t, PKG0, 8, CPU_PRIO_HIGH, "0-7");
	check(t, PKG0, 16, CPU_PRIO_HIGH, "0-15");
	check(t, PKG0, 40, CPU_PRIO_HIGH, "0-19,40-59");
	check(t, ALL40, 44, CPU_PRIO_HIGH, "0-20,22,24,26,40-59");
	check(t, ALL40, 48, CPU_PRIO_HIGH, "0-27,40-59");
	topology_free(t);
}

/* TestClusteredCoreKindAllocation, cluster1: recorded kinds and
 * priorities (E-cores LOW, the rest NORMAL). */
Test(cpualloc, upstream_core_kind_clusters)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");

	inject_clusters(t, pkg1_clusters, 10);
	check(t, ALL40, 4, CPU_PRIO_NORMAL, "0-3");
	check(t, ALL40, 8, CPU_PRIO_NORMAL, "0-7");
	check(t, ALL40, 32, CPU_PRIO_NORMAL, "0-15,40-55");
	check(t, ALL40, 4, CPU_PRIO_LOW, "16-19");
	check(t, ALL40, 8, CPU_PRIO_LOW, "16-19,56-59");
	check(t, ALL40, 36, CPU_PRIO_NORMAL, "0-15,20,22,24,26,40-55");
	check(t, ALL40, 40, CPU_PRIO_NORMAL, "0-15,20-27,40-55");
	topology_free(t);
}

/*
 * cluster2: upstream makes 38-39 a P-cluster while the priorities stay
 * those discovered (38-39 are E-cores, LOW); set_kind re-derives the
 * priorities, so they are forced back.
 */
Test(cpualloc, upstream_core_kind_clusters_tight)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");

	inject_clusters(t, pkg1_clusters2, 11);
	set_kind(t, "38-39", CORE_KIND_PERF);
	set_prio(t, "38-39", CPU_PRIO_LOW);
	check(t, ALL40, 2, CPU_PRIO_LOW, "36-37");
	check(t, ALL40, 6, CPU_PRIO_LOW, "36-37,76-79");
	check(t, ALL40, 8, CPU_PRIO_LOW, "16-19,56-59");
	topology_free(t);
}

/* Without clusters the hybrid tree allocates by cores and threads. */
Test(cpualloc, hybrid_without_clusters)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");

	/* node0 = 0-2,5-6,...; siblings n and n+40. */
	check(t, "0-2,5-6,10-12,15-16,40-42,45-46,50-52,55-56", 2,
	    CPU_PRIO_NONE, "0,40");
	check(t, ALL40, 4, CPU_PRIO_NONE, "0-1,40-41");
	topology_free(t);
}

/*
 * The recorded server: node k holds the CPUs = k mod 4, siblings n and
 * n+56 in the same node, packages even and odd CPUs (anchor §10).
 */
static char *
node_cpus(const struct topology *t, int id)
{
	const struct topo_node	*node = topology_node_by_id(t, id);

	cr_assert_not_null(node);
	return (cpuset_format(&node->cpus));
}

Test(cpualloc, server_node_pairs)
{
	struct topology	*t = testlib_machine("server");
	char		*n0 = node_cpus(t, 0), *n1 = node_cpus(t, 1);

	/* The isolated core 4,60 is not preferred by the allocator. */
	check(t, n1, 2, CPU_PRIO_NONE, "1,57");
	check(t, n0, 2, CPU_PRIO_NONE, "0,56");
	/* Whole cores in id order, across packages. */
	check(t, "0-111", 4, CPU_PRIO_NONE, "0-1,56-57");
	free(n0);
	free(n1);
	topology_free(t);
}

Test(cpualloc, server_single_cpu)
{
	struct topology	*t = testlib_machine("server");

	/* Package 0 first, then the lowest CPU of an idle core. */
	check(t, "0-111", 1, CPU_PRIO_NONE, "0");
	check(t, "1-111", 1, CPU_PRIO_NONE, "56");
	topology_free(t);
}

Test(cpualloc, half_used_cores_first)
{
	struct topology	*t = testlib_machine("server");
	char		*n0 = node_cpus(t, 0);
	struct cpuset	*from = testlib_set(n0);
	char		*text;

	/* 56 is in use: its sibling 0 completes an odd count. */
	cpuset_del(from, 56);
	text = cpuset_format(from);
	check(t, text, 3, CPU_PRIO_NONE, "0,4,60");
	check(t, text, 1, CPU_PRIO_NONE, "0");
	/* Two half-used cores: the lower one first. */
	cpuset_del(from, 60);
	free(text);
	text = cpuset_format(from);
	check(t, text, 1, CPU_PRIO_NONE, "0");
	check(t, text, 3, CPU_PRIO_NONE, "0,8,64");
	free(text);
	free(n0);
	cpuset_free(from);
	topology_free(t);
}

Test(cpualloc, idle_packages_whole)
{
	struct topology	*t = testlib_machine("server");
	struct cpuset	*even = cpuset_new();
	char		*want;
	int		 i;

	/* 57 CPUs: all of package 0 (the even CPUs) and one more. */
	for (i = 0; i <= 110; i += 2)
		cpuset_add(even, i);
	cpuset_add(even, 1);
	want = cpuset_format(even);
	check(t, "0-111", 57, CPU_PRIO_NONE, want);
	free(want);
	cpuset_free(even);
	topology_free(t);

	/* Package k: 18k..18k+17 and their siblings +72. */
	t = testlib_machine("4-socket-server-nosnc");
	check(t, "0-143", 36, CPU_PRIO_NONE, "0-17,72-89");
	check(t, "1-143", 36, CPU_PRIO_NONE, "18-35,90-107");
	/* Without the flag the same count is taken by cores. */
	check_flags(t, "0-143", 36, CPU_PRIO_NONE,
	    CPUALLOC_ALL & ~CPUALLOC_IDLE_PACKAGES, "0-17,72-89");
	check_flags(t, "1-143", 36, CPU_PRIO_NONE,
	    CPUALLOC_ALL & ~CPUALLOC_IDLE_PACKAGES, "1-18,73-90");
	topology_free(t);
}

Test(cpualloc, exact_and_too_many)
{
	struct topology	*t = testlib_machine("server");
	struct cpuset	*from = testlib_set("5,9,13");
	struct cpuset	*result = testlib_set("100");
	char		*cause = NULL;

	/* All of from, whatever the topology would say. */
	cr_assert_eq(cpualloc_take(t, from, 3, CPU_PRIO_NONE, CPUALLOC_ALL,
	    result, &cause), 0);
	testlib_assert_set(result, "5,9,13");
	cr_assert(cpuset_empty(from));

	/* More than from holds: an error naming the set, nothing changed. */
	cpuset_free(from);
	from = testlib_set("5,9,13");
	cpuset_zero(result);
	cpuset_add(result, 100);
	cr_assert_eq(cpualloc_take(t, from, 4, CPU_PRIO_NONE, CPUALLOC_ALL,
	    result, &cause), -ENOSPC);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, "5,9,13"), "cause \"%s\"", cause);
	testlib_assert_set(from, "5,9,13");
	testlib_assert_set(result, "100");
	free(cause);
	cause = NULL;

	/* Zero is an empty success. */
	cr_assert_eq(cpualloc_take(t, from, 0, CPU_PRIO_NONE, CPUALLOC_ALL,
	    result, &cause), 0);
	cr_assert(cpuset_empty(result));
	testlib_assert_set(from, "5,9,13");

	cr_assert_eq(cpualloc_take(t, from, -1, CPU_PRIO_NONE, CPUALLOC_ALL,
	    result, &cause), -EINVAL);
	cr_assert_not_null(cause);
	free(cause);

	cpuset_free(from);
	cpuset_free(result);
	topology_free(t);
}

/* CPUs the machine does not have are never picked. */
Test(cpualloc, cpus_outside_the_machine)
{
	struct topology	*t = testlib_machine("server");
	struct cpuset	*from = testlib_set("0-2,200-201");
	struct cpuset	 result = CPUSET_INITIALIZER;
	char		*cause = NULL;

	cr_assert_eq(cpualloc_take(t, from, 4, CPU_PRIO_NONE, CPUALLOC_ALL,
	    &result, &cause), -ENOSPC);
	cr_assert_not_null(cause);
	testlib_assert_set(from, "0-2,200-201");
	cr_assert(cpuset_empty(&result));
	free(cause);
	/* Package 0 (0, 2) first, then package 1. */
	check(t, "0-2,200-201", 3, CPU_PRIO_NONE, "0-2");
	cpuset_free(from);
	topology_free(t);
}

/*
 * Synthetic machines from the builder. Cores are numbered package by
 * package; with adjacent numbering a core's threads are consecutive
 * (0-1, 2-3, ...), else thread k of core c is c + k * (all cores).
 */
struct synth {
	int		 packages;
	int		 cores;		/* per package */
	int		 threads;
	int		 adjacent;
	int		 nodes;		/* per package */
	int		 l1;		/* L1d and L1i per core */
	int		 l2;		/* cores per L2, 0 none */
	int		 l3;		/* per L3, 0 package, -1 none */
	const char	*offline;	/* offline CPUs, NULL none */
};

static int
synth_cpu(const struct synth *m, int pkg, int core, int thread)
{
	int	 c = pkg * m->cores + core;

	if (m->adjacent)
		return (c * m->threads + thread);
	return (c + thread * m->packages * m->cores);
}

static void
synth_group(const struct synth *m, int pkg, int first, int ncores,
    struct cpuset *s)
{
	int	 c, k;

	cpuset_zero(s);
	for (c = first; c < first + ncores && c < m->cores; c++)
		for (k = 0; k < m->threads; k++)
			cpuset_add(s, synth_cpu(m, pkg, c, k));
}

static void
synth_cache(struct topology *t, int cpu, int level, char type,
    const struct cpuset *s)
{
	char	*cause = NULL;

	cr_assert_eq(topology_add_cache(t, cpu, level, type, -1, 0, s,
	    &cause), 0, "cache: %s", cause ? cause : "?");
}

static struct topology *
synth_build(const struct synth *m)
{
	struct topology		*t = topology_new();
	struct topo_cpu_info	 info;
	struct cpuset		 threads = CPUSET_INITIALIZER;
	struct cpuset		 s = CPUSET_INITIALIZER;
	struct cpuset		*nodes, *offline;
	char			*cause = NULL;
	int			 p, c, k, id, per, nnodes;

	offline = testlib_set(m->offline != NULL ? m->offline : "");
	nnodes = m->packages * m->nodes;
	nodes = xcalloc(nnodes, sizeof *nodes);
	per = m->cores / m->nodes;
	for (p = 0; p < m->packages; p++) {
		for (c = 0; c < m->cores; c++) {
			synth_group(m, p, c, 1, &threads);
			for (k = 0; k < m->threads; k++) {
				id = synth_cpu(m, p, c, k);
				memset(&info, 0, sizeof info);
				info.id = id;
				info.online = !cpuset_has(offline, id);
				info.package = p;
				info.cluster = -1;
				info.core = c;
				info.threads = &threads;
				cr_assert_eq(topology_add_cpu(t, &info,
				    &cause), 0, "%s", cause ? cause : "?");
				cpuset_add(&nodes[p * m->nodes + c / per], id);
				if (m->l1) {
					synth_cache(t, id, 1, 'D', &threads);
					synth_cache(t, id, 1, 'I', &threads);
				}
				if (m->l2 > 0) {
					synth_group(m, p, c - c % m->l2, m->l2,
					    &s);
					synth_cache(t, id, 2, 'U', &s);
				}
				if (m->l3 >= 0) {
					if (m->l3 == 0)
						synth_group(m, p, 0, m->cores,
						    &s);
					else
						synth_group(m, p,
						    c - c % m->l3, m->l3, &s);
					synth_cache(t, id, 3, 'U', &s);
				}
			}
		}
	}
	for (p = 0; p < nnodes; p++) {
		cr_assert_eq(topology_add_node(t, p, &nodes[p], 1ULL << 30,
		    NULL, 0, &cause), 0, "%s", cause ? cause : "?");
		cpuset_clear(&nodes[p]);
	}
	free(nodes);
	cpuset_free(offline);
	cpuset_clear(&threads);
	cpuset_clear(&s);
	cr_assert_eq(topology_finish(t, &cause), 0, "%s", cause ? cause : "?");
	return (t);
}

/* n4c16 of the e2e tests: 2 packages x 2 nodes x 2 cores x 2 threads. */
Test(cpualloc, n4c16_two_threads_of_a_core)
{
	struct synth	 m = { .packages = 2, .cores = 4, .threads = 2,
	    .adjacent = 1, .nodes = 2, .l1 = 1 };
	struct topology	*t = synth_build(&m);

	testlib_assert_set(&topology_node_by_id(t, 1)->cpus, "4-7");
	check(t, "4-7", 2, CPU_PRIO_NONE, "4-5");
	check(t, "0-15", 2, CPU_PRIO_NONE, "0-1");
	check(t, "8-15", 2, CPU_PRIO_NONE, "8-9");
	/* An odd count completes no core of another package. */
	check(t, "0-15", 3, CPU_PRIO_NONE, "0-2");
	check(t, "1-15", 3, CPU_PRIO_NONE, "1-3");
	/* The last thread stays in the package the core came from. */
	check(t, "0,8-15", 3, CPU_PRIO_NONE, "8-10");
	topology_free(t);
}

/*
 * One package of 8 cores, threads adjacent: L2 shared by pairs of cores,
 * so the cache groups are 0-3, 4-7, 8-11 and 12-15.
 */
static const struct synth l2_pairs = { .packages = 1, .cores = 8,
    .threads = 2, .adjacent = 1, .nodes = 1, .l1 = 1, .l2 = 2 };

Test(cpualloc, cache_groups_idle_group_first)
{
	struct topology	*t = synth_build(&l2_pairs);
	unsigned	 nogroups = CPUALLOC_ALL & ~CPUALLOC_CACHE_GROUPS;

	/* CPU 0 is used: a whole idle group beats two idle cores of it. */
	check(t, "1-15", 4, CPU_PRIO_NONE, "4-7");
	check_flags(t, "1-15", 4, CPU_PRIO_NONE, nogroups, "2-5");
	/* Idle groups, the last one split by cores: 4 is used, so group
	 * 4-7 is only partly free and left alone. */
	check(t, "0-3,5-15", 6, CPU_PRIO_NONE, "0-3,8-9");
	check_flags(t, "0-3,5-15", 6, CPU_PRIO_NONE, nogroups, "0-3,6-7");
	/* Single CPUs never use groups. */
	check(t, "1-15", 1, CPU_PRIO_NONE, "1");
	topology_free(t);
}

Test(cpualloc, cache_groups_partly_used)
{
	struct topology	*t = synth_build(&l2_pairs);

	/* No idle group left: a group with exactly the count free wins. */
	check(t, "1-3,6-7,9-11,13-15", 2, CPU_PRIO_NONE, "6-7");
	check_flags(t, "1-3,6-7,9-11,13-15", 2, CPU_PRIO_NONE,
	    CPUALLOC_ALL & ~CPUALLOC_CACHE_GROUPS, "2-3");
	/* Else the biggest groups first, the last split. */
	check(t, "1-3,6-7,9-11,13-15", 4, CPU_PRIO_NONE, "1-3,9");
	topology_free(t);
}

Test(cpualloc, cache_groups_by_l3)
{
	/* Threads of a core apart (c, c+8); L3 per 4 cores, L2 per core. */
	struct synth	 m = { .packages = 1, .cores = 8, .threads = 2,
	    .nodes = 1, .l1 = 1, .l2 = 1, .l3 = 4 };
	struct topology	*t = synth_build(&m);

	/* Groups 0-3,8-11 and 4-7,12-15; CPU 0 used. */
	check(t, "1-15", 8, CPU_PRIO_NONE, "4-7,12-15");
	check_flags(t, "1-15", 8, CPU_PRIO_NONE,
	    CPUALLOC_ALL & ~CPUALLOC_CACHE_GROUPS, "1-4,9-12");
	topology_free(t);
}

/*
 * Upstream walks levels from the cache *count* - 1: CPUs that list only
 * an L2 and an L3 are asked about level 1 only, so an L3 shared by
 * groups of cores makes no groups (pitfall 21).
 */
Test(cpualloc, cache_level_quirk)
{
	struct synth	 m = { .packages = 1, .cores = 8, .threads = 2,
	    .adjacent = 1, .nodes = 1, .l2 = 1, .l3 = 2 };
	struct topology	*t = synth_build(&m);

	check(t, "1-15", 4, CPU_PRIO_NONE, "2-5");
	topology_free(t);

	/* With L1d and L1i listed too the same L3 groups. */
	m.l1 = 1;
	t = synth_build(&m);
	check(t, "1-15", 4, CPU_PRIO_NONE, "4-7");
	topology_free(t);
}

/* Priorities: 4 cores x 2 threads, siblings n and n+4; 2,6,3,7 HIGH. */
Test(cpualloc, priorities_in_cores_and_threads)
{
	struct synth	 m = { .packages = 1, .cores = 4, .threads = 2,
	    .nodes = 1, .l1 = 1 };
	struct topology	*t = synth_build(&m);

	set_prio(t, "2-3,6-7", CPU_PRIO_HIGH);
	set_prio(t, "0-1,4-5", CPU_PRIO_LOW);
	check(t, "0-7", 2, CPU_PRIO_HIGH, "2,6");
	check(t, "0-7", 2, CPU_PRIO_LOW, "0,4");
	/* NORMAL prefers lower priorities over higher ones. */
	check(t, "0-7", 2, CPU_PRIO_NORMAL, "0,4");
	check(t, "0-7", 2, CPU_PRIO_NONE, "0,4");
	check(t, "0-7", 1, CPU_PRIO_HIGH, "2");
	check(t, "0-7", 1, CPU_PRIO_LOW, "0");
	check(t, "0-7", 3, CPU_PRIO_HIGH, "2-3,6");
	/* Past the wanted priority: LOW wants HIGH CPUs last. */
	check(t, "0-7", 5, CPU_PRIO_LOW, "0-2,4-5");
	topology_free(t);
}

/* Two packages of 2 cores x 2 threads, package 1 all HIGH. */
Test(cpualloc, priorities_pick_packages)
{
	struct synth	 m = { .packages = 2, .cores = 2, .threads = 2,
	    .adjacent = 1, .nodes = 1, .l1 = 1 };
	struct topology	*t = synth_build(&m);

	set_prio(t, "0-3", CPU_PRIO_LOW);
	set_prio(t, "4-7", CPU_PRIO_HIGH);
	check(t, "0-7", 4, CPU_PRIO_HIGH, "4-7");
	check(t, "0-7", 4, CPU_PRIO_NONE, "0-3");
	check(t, "0-7", 4, CPU_PRIO_LOW, "0-3");
	/* A used CPU in each package: threads from the one that fits. */
	check(t, "1-3,5-7", 3, CPU_PRIO_HIGH, "5-7");
	check(t, "1-3,5-7", 3, CPU_PRIO_LOW, "1-3");
	topology_free(t);
}

/*
 * n4c16 with CPU 3 offline: core 2-3 has one online thread. A thread of
 * a half-used core and the lone thread tie on free threads (1), so the
 * lower id wins; a request that repels NORMAL CPUs prefers the smaller
 * core, one that wants them the bigger (cmpCPUSet, anchor §3.3).
 */
Test(cpualloc, cores_of_different_sizes)
{
	struct synth	 m = { .packages = 2, .cores = 4, .threads = 2,
	    .adjacent = 1, .nodes = 2, .l1 = 1, .offline = "3" };
	struct topology	*t = synth_build(&m);
	unsigned	 nocores = CPUALLOC_ALL & ~CPUALLOC_IDLE_CORES;

	cr_assert_eq(topology_cpu(t, 3)->online, 0);
	check(t, "1-2,4-7", 1, CPU_PRIO_NONE, "2");
	check_flags(t, "1-2,4-7", 1, CPU_PRIO_NONE, nocores, "1");
	check_flags(t, "2,4-7", 1, CPU_PRIO_NONE, nocores, "2");
	check(t, "0-2,4-7", 2, CPU_PRIO_NONE, "0-1");
	check(t, "0-2,4-7", 2, CPU_PRIO_NORMAL, "0-1");
	check(t, "0-2,4-7", 2, CPU_PRIO_LOW, "0,2");
	check(t, "0-2,4-7", 3, CPU_PRIO_NONE, "0-2");
	topology_free(t);
}
