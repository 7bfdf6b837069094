/*
 * test_topology.c: the pure topology model built through its builder API
 * (R-TOPO-1, R-TOPO-2): what topology_finish() derives (cores, packages,
 * clusters, caches, nodes, memory types, CPU priorities after anchor
 * §3.6), the inconsistencies it refuses with a cause, the override hooks
 * and finishing again.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "topology.h"

struct cpu_spec {
	int		 id;
	int		 online;
	int		 package;
	int		 die;
	int		 cluster;
	int		 core;
	enum core_kind	 kind;
	unsigned long	 khz;
	const char	*epp;
	const char	*threads;	/* list form or NULL */
};

static int
try_cpu(struct topology *t, const struct cpu_spec *c, char **cause)
{
	struct topo_cpu_info	 info;
	struct cpuset		*threads = NULL;
	int			 rc;

	memset(&info, 0, sizeof info);
	info.id = c->id;
	info.online = c->online;
	info.package = c->package;
	info.die = c->die;
	info.cluster = c->cluster;
	info.core = c->core;
	info.kind = c->kind;
	info.base_khz = c->khz;
	info.epp = c->epp;
	if (c->threads != NULL) {
		threads = testlib_set(c->threads);
		info.threads = threads;
	}
	rc = topology_add_cpu(t, &info, cause);
	cpuset_free(threads);
	return (rc);
}

static void
add_cpu(struct topology *t, const struct cpu_spec *c)
{
	char	*cause = NULL;

	cr_assert_eq(try_cpu(t, c, &cause), 0, "cpu %d: %s", c->id,
	    cause ? cause : "?");
}

/* An online CPU of a non-hybrid machine without cpufreq. */
static void
add_plain(struct topology *t, int id, int package, int core,
    const char *threads)
{
	struct cpu_spec	c = { id, 1, package, 0, -1, core, CORE_KIND_UNKNOWN,
	    0, NULL, threads };

	add_cpu(t, &c);
}

static int
try_node(struct topology *t, int id, const char *cpus, uint64_t memory,
    const int *distance, int n, char **cause)
{
	struct cpuset	*set = testlib_set(cpus);
	int		 rc;

	rc = topology_add_node(t, id, set, memory, distance, n, cause);
	cpuset_free(set);
	return (rc);
}

static void
add_node(struct topology *t, int id, const char *cpus, uint64_t memory,
    const int *distance, int n)
{
	char	*cause = NULL;

	cr_assert_eq(try_node(t, id, cpus, memory, distance, n, &cause), 0,
	    "node %d: %s", id, cause ? cause : "?");
}

static void
add_cache(struct topology *t, int cpu, int level, char type, int id,
    uint64_t size, const char *cpus)
{
	struct cpuset	*set = testlib_set(cpus);
	char		*cause = NULL;

	cr_assert_eq(topology_add_cache(t, cpu, level, type, id, size, set,
	    &cause), 0, "cache: %s", cause ? cause : "?");
	cpuset_free(set);
}

static void
finish(struct topology *t)
{
	char	*cause = NULL;

	cr_assert_eq(topology_finish(t, &cause), 0, "finish: %s",
	    cause ? cause : "?");
}

/* finish() must fail with an errno and a cause holding every word given. */
static void
finish_fails(struct topology *t, const char *word1, const char *word2)
{
	char	*cause = NULL;
	int	 rc;

	rc = topology_finish(t, &cause);
	cr_assert_lt(rc, 0, "finish accepted an inconsistent topology");
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, word1), "cause \"%s\" lacks \"%s\"",
	    cause, word1);
	if (word2 != NULL)
		cr_assert_not_null(strstr(cause, word2), "cause \"%s\" lacks "
		    "\"%s\"", cause, word2);
	free(cause);
}

/*
 * Two packages of two cores with two threads each, siblings n and n+4:
 * package 0 holds cores {0,4} and {1,5}, package 1 cores {2,6}, {3,7}.
 * The CPUs are added out of order, and package 1 first.
 */
static struct topology *
two_packages(void)
{
	struct topology	*t = topology_new();
	int		 dist0[] = { 10, 21 }, dist1[] = { 21, 10 };

	add_plain(t, 6, 1, 0, "2,6");
	add_plain(t, 2, 1, 0, "2,6");
	add_plain(t, 3, 1, 4, "3,7");
	add_plain(t, 7, 1, 4, "3,7");
	add_plain(t, 0, 0, 0, "0,4");
	add_plain(t, 4, 0, 0, "0,4");
	add_plain(t, 1, 0, 4, "1,5");
	add_plain(t, 5, 0, 4, "1,5");
	add_node(t, 1, "2-3,6-7", 1ULL << 30, dist1, 2);
	add_node(t, 0, "0-1,4-5", 1ULL << 30, dist0, 2);
	return (t);
}

Test(topology, derived_machine_view)
{
	struct topology			*t = two_packages();
	const struct topo_package	*pkg;
	const struct topo_core		*core;
	const struct topo_cpu		*cpu;
	const char			*want[] = {
		"0,4", "1,5", "2,6", "3,7"
	};
	int				 i;

	finish(t);
	testlib_assert_set(topology_online(t), "0-7");
	cr_assert_eq(topology_npackages(t), 2);
	pkg = topology_package(t, 0);
	cr_assert_eq(pkg->id, 0);
	testlib_assert_set(&pkg->cpus, "0-1,4-5");
	testlib_assert_set(&pkg->nodes, "0");
	cr_assert_eq(pkg->ndies, 1);
	cr_assert_eq(pkg->dies[0].id, 0);
	testlib_assert_set(&pkg->dies[0].cpus, "0-1,4-5");
	testlib_assert_set(&pkg->dies[0].nodes, "0");
	cr_assert_eq(pkg->dies[0].nclusters, 0, "no cluster_id, no cluster");
	pkg = topology_package(t, 1);
	cr_assert_eq(pkg->id, 1);
	testlib_assert_set(&pkg->cpus, "2-3,6-7");
	testlib_assert_set(&pkg->nodes, "1");
	cr_assert_eq(topology_package_by_id(t, 1), pkg);
	cr_assert_null(topology_package_by_id(t, 2));
	cr_assert_null(topology_package(t, 2));

	/* Same core_id in both packages: four distinct cores. */
	cr_assert_eq(topology_ncores(t), 4);
	cr_assert_eq(topology_threads_per_core(t), 2);
	for (i = 0; i < 4; i++) {
		core = topology_core(t, i);
		cr_assert_eq(core->index, i);
		testlib_assert_set(&core->threads, want[i]);
	}
	cr_assert_eq(topology_core(t, 2)->package, 1);
	cr_assert_eq(topology_core(t, 3)->core_id, 4);
	cr_assert_null(topology_core(t, 4));

	cpu = topology_cpu(t, 5);
	cr_assert_eq(cpu->id, 5);
	cr_assert(cpu->online);
	cr_assert_eq(cpu->package, 0);
	cr_assert_eq(cpu->core, 1);
	cr_assert_eq(cpu->node, 0);
	cr_assert_eq(cpu->cluster, -1);
	cr_assert_eq(topology_cpu(t, 7)->node, 1);
	cr_assert_null(topology_cpu(t, 8));
	cr_assert_null(topology_cpu(t, -1));
	cr_assert_eq(topology_hybrid(t), 0);
	topology_free(t);
}

Test(topology, offline_cpus_known_but_in_no_set)
{
	struct topology		*t = topology_new();
	struct cpu_spec		 off = { 3, 0, 0, 0, -1, 1, CORE_KIND_UNKNOWN,
	    0, NULL, NULL };
	struct cpuset		*iso = testlib_set("1,3");
	const struct topo_cpu	*cpu;

	add_plain(t, 0, 0, 0, "0,2");
	add_plain(t, 2, 0, 0, "0,2");
	add_plain(t, 1, 0, 1, "1");
	add_cpu(t, &off);
	topology_set_isolated(t, iso);
	add_node(t, 0, "0-3", 0, NULL, 0);
	finish(t);

	testlib_assert_set(topology_online(t), "0-2");
	testlib_assert_set(topology_isolated(t), "1");
	cpu = topology_cpu(t, 3);
	cr_assert_not_null(cpu, "an offline CPU is still known");
	cr_assert_eq(cpu->online, 0);
	cr_assert_eq(cpu->isolated, 0);
	cr_assert_eq(cpu->core, -1);
	cr_assert_eq(topology_ncores(t), 2);
	testlib_assert_set(&topology_core(t, 1)->threads, "1");
	cr_assert_eq(topology_threads_per_core(t), 2);
	testlib_assert_set(&topology_node(t, 0)->cpus, "0-2");
	testlib_assert_set(&topology_package(t, 0)->cpus, "0-2");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-2");
	cpuset_free(iso);
	topology_free(t);
}

Test(topology, no_node_information_is_node_0)
{
	struct topology		*t = topology_new();
	struct cpu_spec		 off = { 2, 0, -1, -1, -1, -1,
	    CORE_KIND_UNKNOWN, 0, NULL, NULL };
	const struct topo_node	*node;

	add_plain(t, 0, 0, 0, "0");
	add_plain(t, 1, 0, 1, "1");
	add_cpu(t, &off);
	finish(t);
	cr_assert_eq(topology_nnodes(t), 1);
	node = topology_node(t, 0);
	cr_assert_eq(node->id, 0);
	testlib_assert_set(&node->cpus, "0-1");
	cr_assert_eq(node->type, MEM_TYPE_DRAM);
	cr_assert_eq(node->package, 0);
	cr_assert_eq(topology_node_distance(t, 0, 0), 10);
	cr_assert_eq(topology_cpu(t, 1)->node, 0);
	cr_assert_eq(topology_cpu(t, 2)->node, 0);
	testlib_assert_set(&topology_package(t, 0)->nodes, "0");
	topology_free(t);
}

Test(topology, clusters_from_cluster_ids)
{
	struct topology		*t = topology_new();
	struct cpu_spec		 c = { 0, 1, 0, 0, 0, 0, CORE_KIND_UNKNOWN, 0,
	    NULL, NULL };
	const struct topo_die	*die;
	char			 sib[16];
	int			 i;

	/* Die 0: clusters 3 (0-3) and 1 (4-7); die 1: one core each. */
	for (i = 0; i < 16; i++) {
		snprintf(sib, sizeof sib, "%d-%d", i & ~1, (i & ~1) + 1);
		c.id = i;
		c.die = i / 8;
		c.core = i / 2;
		c.cluster = i < 4 ? 3 : i < 8 ? 1 : 100 - i / 2;
		c.threads = sib;
		add_cpu(t, &c);
	}
	finish(t);
	die = &topology_package(t, 0)->dies[0];
	cr_assert_eq(die->nclusters, 2);
	cr_assert_eq(die->clusters[0].id, 1, "ascending cluster ids");
	cr_assert_eq(die->clusters[0].index, 0);
	testlib_assert_set(&die->clusters[0].cpus, "4-7");
	cr_assert_eq(die->clusters[1].id, 3);
	testlib_assert_set(&die->clusters[1].cpus, "0-3");
	cr_assert_eq(topology_cpu(t, 2)->cluster, 1);
	cr_assert_eq(topology_cpu(t, 5)->cluster, 0);

	/* Clusters that are one core each merge into one logical cluster
	 * named after the cluster of its lowest CPU (8: 100 - 4 = 96). */
	die = &topology_package(t, 0)->dies[1];
	cr_assert_eq(die->id, 1);
	cr_assert_eq(die->nclusters, 1);
	testlib_assert_set(&die->clusters[0].cpus, "8-15");
	cr_assert_eq(die->clusters[0].id, 96);
	cr_assert_eq(topology_cpu(t, 15)->cluster, 0);
	topology_free(t);
}

Test(topology, caches_deduplicated_and_sorted_by_level)
{
	struct topology		*t = topology_new();
	const struct topo_cpu	*cpu;
	const struct topo_cache	*k;
	int			 i, id;

	for (id = 0; id < 4; id++)
		add_plain(t, id, 0, id, NULL);
	/* Every CPU reports its caches, the shared L3 first. */
	for (id = 0; id < 4; id++) {
		char	one[4], pair[8];

		snprintf(one, sizeof one, "%d", id);
		snprintf(pair, sizeof pair, "%d-%d", id & ~1, (id & ~1) + 1);
		add_cache(t, id, 3, 'U', 0, 8 << 20, "0-3");
		add_cache(t, id, 2, 'U', id / 2, 1 << 20, pair);
		add_cache(t, id, 1, 'I', id, 32 << 10, one);
		add_cache(t, id, 1, 'D', id, 48 << 10, one);
	}
	/* The reports of one cache by the CPUs that share it are one. */
	cr_assert_eq(topology_cache_records(t), 11);
	finish(t);
	/* 4 L1d + 4 L1i + 2 L2 + 1 L3. */
	cr_assert_eq(topology_ncaches(t), 11);
	for (id = 0; id < 4; id++) {
		cpu = topology_cpu(t, id);
		cr_assert_eq(cpu->ncaches, 4, "cpu %d has %d caches", id,
		    cpu->ncaches);
		for (i = 1; i < cpu->ncaches; i++)
			cr_assert_leq(
			    topology_cache(t, cpu->caches[i - 1])->level,
			    topology_cache(t, cpu->caches[i])->level);
		k = topology_cache(t, cpu->caches[3]);
		cr_assert_eq(k->level, 3);
		cr_assert_eq(k->type, 'U');
		cr_assert_eq(k->size, 8u << 20);
		testlib_assert_set(&k->cpus, "0-3");
		k = topology_cache(t, cpu->caches[2]);
		cr_assert_eq(k->level, 2);
		cr_assert_eq(k->id, id / 2);
	}
	cr_assert_eq(topology_cpu(t, 0)->caches[3],
	    topology_cpu(t, 3)->caches[3], "one L3 for all");
	cr_assert_eq(topology_cpu(t, 0)->caches[2],
	    topology_cpu(t, 1)->caches[2], "one L2 per pair");
	cr_assert_neq(topology_cpu(t, 0)->caches[2],
	    topology_cpu(t, 2)->caches[2]);
	cr_assert_null(topology_cache(t, 11));
	topology_free(t);
}

/*
 * A report is kept on its own when it says more than the first: another
 * size, a reporter outside the cache's CPUs, or a reporter not known (yet):
 * finishing still refuses a cache of a CPU that never came.
 */
Test(topology, cache_reports_kept_when_they_differ)
{
	struct topology		*t = topology_new();
	const struct topo_cache	*k;
	char			*cause = NULL;
	int			 id;

	for (id = 0; id < 4; id++)
		add_plain(t, id, 0, id, NULL);
	add_cache(t, 0, 2, 'U', 0, 1 << 20, "0-1");
	add_cache(t, 1, 2, 'U', 0, 1 << 20, "0-1");
	cr_assert_eq(topology_cache_records(t), 1);
	add_cache(t, 2, 2, 'U', 1, 0, "2-3");		/* size unknown */
	add_cache(t, 3, 2, 'U', 1, 1 << 20, "2-3");
	cr_assert_eq(topology_cache_records(t), 3);
	add_cache(t, 1, 3, 'U', 0, 0, "1-3");
	add_cache(t, 0, 3, 'U', 0, 0, "1-3");		/* not its own */
	add_cache(t, 2, 3, 'U', 0, 0, "1-3");
	cr_assert_eq(topology_cache_records(t), 5);
	finish(t);
	cr_assert_eq(topology_ncaches(t), 3);
	k = topology_cache(t, topology_cpu(t, 3)->caches[0]);
	cr_assert_eq(k->size, 1u << 20, "the size of the report that had it");
	testlib_assert_set(&k->cpus, "2-3");
	/* CPU 0 reported the L3 it is not in: it has it, as before. */
	cr_assert_eq(topology_cpu(t, 0)->ncaches, 2);
	k = topology_cache(t, topology_cpu(t, 0)->caches[1]);
	testlib_assert_set(&k->cpus, "1-3");
	topology_free(t);

	t = topology_new();
	add_plain(t, 0, 0, 0, NULL);
	add_cache(t, 0, 1, 'D', 0, 0, "0-1");
	add_cache(t, 1, 1, 'D', 0, 0, "0-1");	/* CPU 1 never comes */
	cr_assert_eq(topology_cache_records(t), 2);
	cr_assert_lt(topology_finish(t, &cause), 0);
	cr_assert_not_null(strstr(cause, "cpu 1: not a known CPU"), "%s",
	    cause);
	free(cause);
	topology_free(t);
}

/* Thread siblings may be named before they are added; one never added
 * is refused at the finish, naming the CPU that named it. */
Test(topology, thread_siblings_must_be_known_cpus)
{
	struct topology	*t = topology_new();
	char		*cause = NULL;

	add_plain(t, 0, 0, 0, "0-1");		/* 1 comes next */
	add_plain(t, 1, 0, 0, "0-1");
	add_plain(t, 2, 0, 1, "2,7");		/* 7 never comes */
	add_plain(t, 3, 0, 2, "3");
	cr_assert_lt(topology_finish(t, &cause), 0);
	cr_assert_str_eq(cause, "cpu 2: thread sibling 7 is not a known CPU");
	free(cause);
	cause = NULL;
	/* It comes: finishing again takes it. */
	add_plain(t, 7, 0, 1, "2,7");
	finish(t);
	cr_assert_eq(topology_ncores(t), 3);
	topology_free(t);
}

Test(topology, asymmetric_distances_patched_to_average)
{
	struct topology	*t = topology_new();
	int		 d0[] = { 10, 20, 30 }, d2[] = { 22, 10, 21 };
	int		 d5[] = { 33, 21, 10 };

	add_plain(t, 0, 0, 0, NULL);
	add_plain(t, 1, 0, 1, NULL);
	add_plain(t, 2, 1, 0, NULL);
	add_node(t, 5, "2", 1 << 30, d5, 3);
	add_node(t, 0, "0", 1 << 30, d0, 3);
	add_node(t, 2, "1", 1 << 30, d2, 3);
	finish(t);
	cr_assert_eq(topology_nnodes(t), 3);
	cr_assert_eq(topology_node(t, 1)->id, 2, "nodes by ascending id");
	cr_assert_eq(topology_node_index(t, 5), 2);
	cr_assert_eq(topology_node_index(t, 1), -1);
	cr_assert_eq(topology_node_by_id(t, 2), topology_node(t, 1));
	cr_assert_null(topology_node_by_id(t, 3));
	/* (20 + 22) / 2 = 21, (30 + 33) / 2 = 31, 21 and 21 stay. */
	cr_assert_eq(topology_node_distance(t, 0, 2), 21);
	cr_assert_eq(topology_node_distance(t, 2, 0), 21);
	cr_assert_eq(topology_node_distance(t, 0, 5), 31);
	cr_assert_eq(topology_node_distance(t, 5, 0), 31);
	cr_assert_eq(topology_node_distance(t, 2, 5), 21);
	cr_assert_eq(topology_node_distance(t, 5, 5), 10);
	cr_assert_eq(topology_node(t, 2)->distance[0], 31);
	cr_assert_eq(topology_node_distance(t, 0, 1), -1);
	cr_assert_eq(topology_node(t, 2)->package, 1);
	topology_free(t);
}

Test(topology, memory_types)
{
	struct topology	*t = topology_new();
	const uint64_t	 G = 1ULL << 30;

	add_plain(t, 0, 0, 0, NULL);
	add_plain(t, 1, 1, 0, NULL);
	/* DRAM nodes average 31 GiB. */
	add_node(t, 0, "0", 32 * G, NULL, 0);
	add_node(t, 1, "1", 30 * G, NULL, 0);
	add_node(t, 2, "", 16 * G, NULL, 0);
	add_node(t, 3, "", 128 * G, NULL, 0);
	add_node(t, 4, "", 31 * G, NULL, 0);
	finish(t);
	cr_assert_eq(topology_node_by_id(t, 0)->type, MEM_TYPE_DRAM);
	cr_assert_eq(topology_node_by_id(t, 1)->type, MEM_TYPE_DRAM);
	cr_assert_eq(topology_node_by_id(t, 2)->type, MEM_TYPE_HBM);
	cr_assert_eq(topology_node_by_id(t, 3)->type, MEM_TYPE_PMEM);
	cr_assert_eq(topology_node_by_id(t, 4)->type, MEM_TYPE_PMEM,
	    "as big as the average is not smaller");
	cr_assert_eq(topology_node_by_id(t, 3)->package, -1);
	cr_assert(cpuset_empty(&topology_node_by_id(t, 3)->cpus));
	cr_assert_eq(topology_node_by_id(t, 1)->package, 1);
	cr_assert_eq(topology_node_by_id(t, 3)->memory, 128 * G);
	cr_assert_eq(topology_node_distance(t, 1, 3), 20, "default remote");
	testlib_assert_set(&topology_package(t, 1)->nodes, "1");
	topology_free(t);
}

static void
add_freq(struct topology *t, int id, int package, unsigned long khz,
    const char *epp, enum core_kind kind)
{
	struct cpu_spec	c = { id, 1, package, 0, -1, id, kind, khz, epp,
	    NULL };

	add_cpu(t, &c);
}

Test(topology, priorities_from_base_frequency)
{
	struct topology	*t = topology_new();
	int		 id;

	/* Package 0: three bins; package 1: one bin. */
	for (id = 0; id < 8; id++)
		add_freq(t, id, 0, id < 4 ? 2000000 : id < 6 ? 2500000 :
		    3000000, "balance_performance", CORE_KIND_UNKNOWN);
	for (id = 8; id < 12; id++)
		add_freq(t, id, 1, 2000000, "balance_performance",
		    CORE_KIND_UNKNOWN);
	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "4-7");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "0-3");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "8-11");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NONE), "0-11");
	cr_assert_eq(topology_cpu(t, 6)->prio, CPU_PRIO_HIGH);
	cr_assert_eq(topology_cpu(t, 6)->base_khz, 3000000);
	cr_assert_eq(topology_cpu(t, 9)->prio, CPU_PRIO_NORMAL);
	topology_free(t);
}

Test(topology, unknown_base_frequency_is_low_among_bins)
{
	struct topology	*t = topology_new();

	add_freq(t, 0, 0, 2000000, NULL, CORE_KIND_UNKNOWN);
	add_freq(t, 1, 0, 2400000, NULL, CORE_KIND_UNKNOWN);
	add_freq(t, 2, 0, 0, NULL, CORE_KIND_UNKNOWN);
	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "1");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "0,2");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "");
	topology_free(t);
}

Test(topology, efficient_cores_are_low)
{
	struct topology	*t = topology_new();
	int		 id;

	/* Even with a higher base frequency an E-core stays LOW. */
	for (id = 0; id < 4; id++)
		add_freq(t, id, 0, 3000000, "balance_performance",
		    CORE_KIND_PERF);
	for (id = 4; id < 6; id++)
		add_freq(t, id, 0, 2000000, "balance_performance",
		    CORE_KIND_EFFICIENT);
	add_freq(t, 6, 0, 3500000, "balance_performance",
	    CORE_KIND_EFFICIENT);
	finish(t);
	cr_assert_eq(topology_hybrid(t), 1);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "0-3");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "4-6");
	topology_free(t);

	/* One frequency, one EPP: P-cores NORMAL, E-cores LOW. */
	t = topology_new();
	for (id = 0; id < 4; id++)
		add_freq(t, id, 0, 2000000, "balance_performance",
		    id < 2 ? CORE_KIND_PERF : CORE_KIND_EFFICIENT);
	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-1");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "2-3");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "");
	topology_free(t);
}

Test(topology, priorities_from_epp)
{
	struct topology	*t = topology_new();

	/* The worst EPP seen is LOW, better ones HIGH, whatever the bins. */
	add_freq(t, 0, 0, 2000000, "performance", CORE_KIND_UNKNOWN);
	add_freq(t, 1, 0, 2000000, "balance_performance", CORE_KIND_UNKNOWN);
	add_freq(t, 2, 0, 3000000, "balance_power", CORE_KIND_UNKNOWN);
	add_freq(t, 3, 0, 2000000, "balance_power", CORE_KIND_UNKNOWN);
	add_freq(t, 4, 0, 3000000, "default", CORE_KIND_UNKNOWN);
	add_freq(t, 5, 0, 3000000, NULL, CORE_KIND_UNKNOWN);
	/* Package 1 has a single EPP value: NORMAL. */
	add_freq(t, 6, 1, 2000000, "power", CORE_KIND_UNKNOWN);
	add_freq(t, 7, 1, 2000000, "power", CORE_KIND_UNKNOWN);
	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "0-1");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "2-5");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "6-7");
	topology_free(t);
}

Test(topology, refused_inputs)
{
	struct topology	*t = topology_new();
	struct cpu_spec	 c = { 8192, 1, 0, 0, -1, 0, CORE_KIND_UNKNOWN, 0,
	    NULL, NULL };
	char		*cause = NULL;

	cr_assert_eq(try_cpu(t, &c, &cause), -ERANGE);
	cr_assert_not_null(strstr(cause, "8192"), "%s", cause);
	free(cause);
	cause = NULL;
	c.id = 8191;
	cr_assert_eq(try_cpu(t, &c, &cause), 0, "8191 is the last id");
	cr_assert_eq(try_cpu(t, &c, &cause), -EEXIST);
	cr_assert_not_null(strstr(cause, "cpu 8191"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(try_node(t, 9000, "", 0, NULL, 0, &cause), -ERANGE);
	cr_assert_not_null(strstr(cause, "9000"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(try_node(t, 0, "8191", 0, NULL, 0, &cause), 0);
	cr_assert_eq(try_node(t, 0, "", 0, NULL, 0, &cause), -EEXIST);
	cr_assert_not_null(strstr(cause, "node 0"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_lt(topology_add_cache(t, 8191, 0, 'U', 0, 0, NULL, &cause),
	    0, "cache level 0");
	free(cause);
	cause = NULL;
	cr_assert_lt(topology_add_cache(t, 8191, 1, 'X', 0, 0, NULL, &cause),
	    0, "cache type X");
	free(cause);
	finish(t);
	testlib_assert_set(topology_online(t), "8191");
	topology_free(t);
}

Test(topology, unknown_thread_sibling)
{
	struct topology	*t = topology_new();

	add_plain(t, 0, 0, 0, "0,9");
	add_plain(t, 1, 0, 1, "1");
	finish_fails(t, "cpu 0", "sibling 9");
	cr_assert_null(topology_cpu(t, 0), "a failed finish derives nothing");
	cr_assert_eq(topology_ncores(t), 0);
	topology_free(t);
}

Test(topology, distance_row_of_wrong_length)
{
	struct topology	*t = topology_new();
	int		 d[] = { 10, 20, 20 };

	add_plain(t, 0, 0, 0, NULL);
	add_plain(t, 1, 0, 1, NULL);
	add_node(t, 0, "0", 0, d, 2);
	add_node(t, 1, "1", 0, d, 3);
	finish_fails(t, "node 1", "3 distances");
	topology_free(t);
}

Test(topology, cpu_in_two_nodes_or_none)
{
	struct topology	*t = topology_new();

	add_plain(t, 0, 0, 0, NULL);
	add_plain(t, 1, 0, 1, NULL);
	add_node(t, 0, "0-1", 0, NULL, 0);
	add_node(t, 1, "1", 0, NULL, 0);
	finish_fails(t, "cpu 1", "nodes 0 and 1");
	topology_free(t);

	t = topology_new();
	add_plain(t, 0, 0, 0, NULL);
	add_plain(t, 1, 0, 1, NULL);
	add_node(t, 0, "0", 0, NULL, 0);
	finish_fails(t, "cpu 1", "no NUMA node");
	topology_free(t);
}

Test(topology, cache_of_unknown_cpu)
{
	struct topology	*t = topology_new();

	add_plain(t, 0, 0, 0, NULL);
	add_cache(t, 4, 2, 'U', 0, 0, "4");
	finish_fails(t, "cpu 4", "L2");
	topology_free(t);
}

Test(topology, online_cpu_without_package)
{
	struct topology	*t = topology_new();
	struct cpu_spec	 c = { 3, 1, -1, 0, -1, 0, CORE_KIND_UNKNOWN, 0,
	    NULL, NULL };

	add_cpu(t, &c);
	finish_fails(t, "cpu 3", "package");
	topology_free(t);
}

Test(topology, override_priorities)
{
	struct topology	*t = two_packages();
	struct cpuset	*hi = testlib_set("0-1"), *lo = testlib_set("7,9");

	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-7");
	topology_set_prio(t, hi, CPU_PRIO_HIGH);
	topology_set_prio(t, lo, CPU_PRIO_LOW);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "0-1");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "7");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "2-6");
	cr_assert_eq(topology_cpu(t, 1)->prio, CPU_PRIO_HIGH);

	/* Forced priorities survive finishing again; NONE drops them. */
	finish(t);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "0-1");
	topology_set_prio(t, hi, CPU_PRIO_NONE);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-6");
	cpuset_free(hi);
	cpuset_free(lo);
	topology_free(t);
}

Test(topology, override_clusters_and_kinds)
{
	struct topology		*t = two_packages();
	struct cpuset		*a = testlib_set("0,4");
	struct cpuset		*b = testlib_set("1,5");
	struct cpuset		*c = testlib_set("2-3");
	struct cpuset		*bad = testlib_set("99");
	struct cpuset		*e = testlib_set("1,5,3,7");
	const struct topo_die	*die;
	char			*cause = NULL;

	finish(t);
	cr_assert_eq(topology_set_cluster(t, a, 10, &cause), 0);
	cr_assert_eq(topology_set_cluster(t, b, 11, &cause), 0);
	cr_assert_eq(topology_set_cluster(t, c, 12, &cause), 0);
	cr_assert_eq(topology_set_cluster(t, bad, 1, &cause), -ENOENT);
	cr_assert_not_null(strstr(cause, "99"), "%s", cause);
	free(cause);
	cause = NULL;

	/* Package 0: both clusters are single cores, so one logical one. */
	die = &topology_package(t, 0)->dies[0];
	cr_assert_eq(die->nclusters, 1);
	testlib_assert_set(&die->clusters[0].cpus, "0-1,4-5");
	cr_assert_eq(die->clusters[0].id, 10);
	/* Package 1: 2-3 spans two cores; 6 and 7 have no cluster. */
	die = &topology_package(t, 1)->dies[0];
	cr_assert_eq(die->nclusters, 1);
	testlib_assert_set(&die->clusters[0].cpus, "2-3");
	cr_assert_eq(topology_cpu(t, 6)->cluster, -1);
	cr_assert_eq(topology_cpu(t, 3)->cluster, 0);
	cr_assert_eq(die->clusters[0].kind, CORE_KIND_UNKNOWN);

	cr_assert_eq(topology_hybrid(t), 0);
	topology_set_kind(t, e, CORE_KIND_EFFICIENT);
	cr_assert_eq(topology_hybrid(t), 1);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_LOW), "1,3,5,7");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0,2,4,6");
	die = &topology_package(t, 1)->dies[0];
	cr_assert_eq(die->clusters[0].kind, CORE_KIND_UNKNOWN, "kind of 2");
	cr_assert_eq(topology_cpu(t, 7)->kind, CORE_KIND_EFFICIENT);
	topology_set_kind(t, e, CORE_KIND_UNKNOWN);
	cr_assert_eq(topology_hybrid(t), 0);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-7");

	cpuset_free(a);
	cpuset_free(b);
	cpuset_free(c);
	cpuset_free(e);
	cpuset_free(bad);
	topology_free(t);
}

Test(topology, finish_again_after_more_cpus)
{
	struct topology	*t = topology_new();
	int		 d0[] = { 10, 21 }, d1[] = { 21, 10 };

	add_plain(t, 0, 0, 0, "0-1");
	add_plain(t, 1, 0, 0, "0-1");
	add_cache(t, 0, 1, 'D', 0, 32 << 10, "0-1");
	finish(t);
	finish(t);
	cr_assert_eq(topology_ncores(t), 1);
	cr_assert_eq(topology_ncaches(t), 1);
	cr_assert_eq(topology_nnodes(t), 1);

	add_plain(t, 2, 1, 0, "2-3");
	add_plain(t, 3, 1, 0, "2-3");
	add_cache(t, 1, 1, 'D', 0, 32 << 10, "0-1");
	add_cache(t, 2, 1, 'D', 1, 32 << 10, "2-3");
	add_node(t, 0, "0-1", 0, d0, 2);
	add_node(t, 1, "2-3", 0, d1, 2);
	finish(t);
	testlib_assert_set(topology_online(t), "0-3");
	cr_assert_eq(topology_ncores(t), 2);
	cr_assert_eq(topology_npackages(t), 2);
	cr_assert_eq(topology_ncaches(t), 2);
	cr_assert_eq(topology_nnodes(t), 2);
	cr_assert_eq(topology_cpu(t, 3)->node, 1);
	cr_assert_eq(topology_cpu(t, 3)->ncaches, 1);
	/* The caches' sets are their reports', which moved as more came. */
	testlib_assert_set(&topology_cache(t, topology_cpu(t, 1)->caches[0])->
	    cpus, "0-1");
	testlib_assert_set(&topology_cache(t, topology_cpu(t, 3)->caches[0])->
	    cpus, "2-3");
	cr_assert_eq(topology_node_distance(t, 0, 1), 21);
	topology_free(t);
	topology_free(NULL);
}
