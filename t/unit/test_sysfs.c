/*
 * test_sysfs.c: discovery of the four recorded machines checked against
 * the facts of anchor-policy.md §10 (R-TOPO-1, R-TOPO-3), and copies of a
 * recorded tree with one file corrupted or removed: a malformed file is
 * an error naming it, a missing optional one is normal.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysfs.h"
#include "testlib.h"
#include "topology.h"
#include "xmalloc.h"

#define GiB	(1024.0 * 1024.0 * 1024.0)

/* The set {first, first + step, ...} up to last, in list form. */
static struct cpuset *
stride(int first, int last, int step)
{
	struct cpuset	*s = cpuset_new();
	int		 id;

	for (id = first; id <= last; id += step)
		cpuset_add(s, id);
	return (s);
}

static void
assert_equal_set(const struct cpuset *got, const struct cpuset *want,
    const char *what)
{
	char	*g = cpuset_format(got), *w = cpuset_format(want);

	cr_assert(cpuset_equal(got, want), "%s is %s, expected %s", what, g, w);
	free(g);
	free(w);
}

static void
assert_memory(const struct topo_node *node, double gib)
{
	double	got = (double)node->memory / GiB;

	cr_assert(got > gib - 0.1 && got < gib + 0.1, "node %d has %.2f GiB, "
	    "expected about %.1f", node->id, got, gib);
}

/* Every online CPU's core holds it and its sibling "n + offset". */
static void
assert_siblings(const struct topology *t, int ncpus, int offset)
{
	const struct topo_cpu	*cpu;
	const struct topo_core	*core;
	int			 id;

	for (id = 0; id < ncpus; id++) {
		cpu = topology_cpu(t, id);
		cr_assert_not_null(cpu, "cpu %d", id);
		core = topology_core(t, cpu->core);
		cr_assert_not_null(core, "core of cpu %d", id);
		cr_assert_eq(cpuset_count(&core->threads), 2);
		cr_assert(cpuset_has(&core->threads, id < offset ? id + offset :
		    id - offset), "cpu %d: sibling not n +/- %d", id, offset);
	}
}

/* The last-level cache of a CPU. */
static const struct topo_cache *
last_cache(const struct topology *t, int id)
{
	const struct topo_cpu	*cpu = topology_cpu(t, id);

	cr_assert_gt(cpu->ncaches, 0, "cpu %d has no cache", id);
	return (topology_cache(t, cpu->caches[cpu->ncaches - 1]));
}

Test(sysfs, desktop)
{
	struct topology			*t = testlib_machine("desktop");
	const struct topo_package	*pkg;
	const struct topo_node		*node;
	const struct topo_cache		*k;
	const struct topo_cpu		*cpu;
	int				 i;

	testlib_assert_set(topology_online(t), "0-19");
	testlib_assert_set(topology_isolated(t), "");
	cr_assert_eq(topology_npackages(t), 1);
	pkg = topology_package(t, 0);
	testlib_assert_set(&pkg->cpus, "0-19");
	cr_assert_eq(pkg->ndies, 1);
	cr_assert_eq(pkg->dies[0].nclusters, 0, "no cluster_id recorded");
	cr_assert_eq(topology_nnodes(t), 1);
	node = topology_node(t, 0);
	testlib_assert_set(&node->cpus, "0-19");
	cr_assert_eq(node->type, MEM_TYPE_DRAM);
	assert_memory(node, 62.6);
	cr_assert_eq(topology_ncores(t), 10);
	cr_assert_eq(topology_threads_per_core(t), 2);
	assert_siblings(t, 20, 10);
	cr_assert_eq(topology_hybrid(t), 0);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-19");
	cr_assert_eq(topology_cpu(t, 3)->base_khz, 3300000);

	/* L1d, L1i, L2 per core, one L3 of 14080K for all. */
	cr_assert_eq(topology_ncaches(t), 10 * 3 + 1);
	cpu = topology_cpu(t, 7);
	cr_assert_eq(cpu->ncaches, 4);
	for (i = 0; i < 2; i++) {
		k = topology_cache(t, cpu->caches[i]);
		cr_assert_eq(k->level, 1);
		cr_assert_eq(k->size, 32 * 1024);
		testlib_assert_set(&k->cpus, "7,17");
	}
	cr_assert_neq(topology_cache(t, cpu->caches[0])->type,
	    topology_cache(t, cpu->caches[1])->type);
	k = topology_cache(t, cpu->caches[2]);
	cr_assert_eq(k->level, 2);
	cr_assert_eq(k->size, 1024 * 1024);
	k = last_cache(t, 7);
	cr_assert_eq(k->level, 3);
	cr_assert_eq(k->type, 'U');
	cr_assert_eq(k->size, 14080 * 1024);
	testlib_assert_set(&k->cpus, "0-19");
	topology_free(t);
}

Test(sysfs, server)
{
	struct topology			*t = testlib_machine("server");
	const struct topo_package	*pkg;
	const struct topo_node		*node;
	struct cpuset			*want;
	const double			 mem[] = { 30.9, 31.5, 31.5, 31.5 };
	int				 i, j;

	testlib_assert_set(topology_online(t), "0-111");
	testlib_assert_set(topology_isolated(t), "4-7,60-63");
	cr_assert_eq(topology_npackages(t), 2);
	for (i = 0; i < 2; i++) {
		pkg = topology_package(t, i);
		cr_assert_eq(pkg->id, i);
		want = stride(i, 111, 2);
		assert_equal_set(&pkg->cpus, want, "package cpus");
		cpuset_free(want);
		cr_assert_eq(pkg->ndies, 1);
		testlib_assert_set(&pkg->nodes, i == 0 ? "0,2" : "1,3");
	}

	cr_assert_eq(topology_nnodes(t), 6);
	for (i = 0; i < 4; i++) {
		node = topology_node(t, i);
		cr_assert_eq(node->id, i);
		want = stride(i, 111, 4);
		assert_equal_set(&node->cpus, want, "node cpus");
		cpuset_free(want);
		cr_assert_eq(node->type, MEM_TYPE_DRAM);
		cr_assert_eq(node->package, i % 2);
		assert_memory(node, mem[i]);
	}
	for (i = 4; i < 6; i++) {
		node = topology_node(t, i);
		cr_assert_eq(node->id, i);
		cr_assert(cpuset_empty(&node->cpus));
		cr_assert_eq(node->type, MEM_TYPE_PMEM, "node %d", i);
		cr_assert_eq(node->package, -1);
		assert_memory(node, 124.0);
	}

	/* Distances of §10, symmetric. */
	for (i = 0; i < 6; i++) {
		for (j = 0; j < 6; j++) {
			int	want_d, a = i < j ? i : j, b = i < j ? j : i;

			if (a == b)
				want_d = 10;
			else if ((a == 0 && b == 2) || (a == 1 && b == 3))
				want_d = 11;
			else if (b < 4)
				want_d = 21;
			else if ((b == 4 && a == 0) || (b == 5 && a == 2))
				want_d = 17;
			else
				want_d = 28;
			cr_assert_eq(topology_node_distance(t, i, j), want_d,
			    "distance %d-%d is %d, expected %d", i, j,
			    topology_node_distance(t, i, j), want_d);
		}
	}

	cr_assert_eq(topology_ncores(t), 56);
	cr_assert_eq(topology_threads_per_core(t), 2);
	assert_siblings(t, 112, 56);
	/* A core never spans nodes: 4 and 60 both in node 0. */
	cr_assert_eq(topology_cpu(t, 60)->node, 0);
	cr_assert_eq(topology_cpu(t, 61)->node, 1);
	cr_assert(topology_cpu(t, 62)->isolated);
	cr_assert_eq(topology_hybrid(t), 0);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-111");
	cr_assert_eq(last_cache(t, 1)->size, 39424 * 1024);
	assert_equal_set(&last_cache(t, 1)->cpus, &topology_package(t, 1)->cpus,
	    "L3 of package 1");
	topology_free(t);
}

Test(sysfs, four_socket_server)
{
	struct topology			*t;
	const struct topo_package	*pkg;
	struct cpuset			*want;
	int				 k, j;

	t = testlib_machine("4-socket-server-nosnc");
	testlib_assert_set(topology_online(t), "0-143");
	testlib_assert_set(topology_isolated(t), "");
	cr_assert_eq(topology_npackages(t), 4);
	cr_assert_eq(topology_nnodes(t), 4);
	for (k = 0; k < 4; k++) {
		pkg = topology_package(t, k);
		want = cpuset_new();
		cpuset_add_range(want, 18 * k, 18 * k + 17);
		cpuset_add_range(want, 72 + 18 * k, 72 + 18 * k + 17);
		assert_equal_set(&pkg->cpus, want, "package cpus");
		assert_equal_set(&topology_node(t, k)->cpus, want, "node cpus");
		cpuset_free(want);
		cr_assert_eq(pkg->ndies, 1);
		cr_assert_eq(cpuset_count(&pkg->nodes), 1);
		cr_assert(cpuset_has(&pkg->nodes, k));
		for (j = 0; j < 4; j++)
			cr_assert_eq(topology_node_distance(t, k, j),
			    j == k ? 10 : 21);
	}
	assert_memory(topology_node(t, 0), 187.6);
	assert_memory(topology_node(t, 3), 189.0);
	cr_assert_eq(topology_ncores(t), 72);
	cr_assert_eq(topology_threads_per_core(t), 2);
	assert_siblings(t, 144, 72);
	cr_assert_eq(topology_cpu(t, 5)->base_khz, 0, "no cpufreq");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-143");
	cr_assert_eq(last_cache(t, 20)->size, 25344 * 1024);
	topology_free(t);
}

Test(sysfs, two_socket_hybrid)
{
	struct topology	*t = testlib_machine("2-socket-4-node-40-core");
	const char	*nodes[] = {
		"0-2,5-6,10-12,15-16,40-42,45-46,50-52,55-56",
		"3-4,7-9,13-14,17-19,43-44,47-49,53-54,57-59",
		"20-22,25-26,30-32,35-36,60-62,65-66,70-72,75-76",
		"23-24,27-29,33-34,37-39,63-64,67-69,73-74,77-79"
	};
	struct cpuset	*ecores = testlib_set("16-19,36-39,56-59,76-79");
	int		 i, j, id;

	testlib_assert_set(topology_online(t), "0-79");
	cr_assert_eq(topology_npackages(t), 2);
	testlib_assert_set(&topology_package(t, 0)->cpus, "0-19,40-59");
	testlib_assert_set(&topology_package(t, 1)->cpus, "20-39,60-79");
	testlib_assert_set(&topology_package(t, 0)->nodes, "0-1");
	cr_assert_eq(topology_nnodes(t), 4);
	for (i = 0; i < 4; i++) {
		testlib_assert_set(&topology_node(t, i)->cpus, nodes[i]);
		for (j = 0; j < 4; j++)
			cr_assert_eq(topology_node_distance(t, i, j), i == j ?
			    10 : i / 2 == j / 2 ? 11 : 21);
	}
	assert_memory(topology_node(t, 0), 45.8);
	assert_memory(topology_node(t, 2), 47.2);
	cr_assert_eq(topology_ncores(t), 40);
	cr_assert_eq(topology_threads_per_core(t), 2);
	assert_siblings(t, 80, 40);

	/* Hybrid by the recorded cpu_core/cpu_atom files. */
	cr_assert_eq(topology_hybrid(t), 1);
	for (id = 0; id < 80; id++)
		cr_assert_eq(topology_cpu(t, id)->kind, cpuset_has(ecores, id) ?
		    CORE_KIND_EFFICIENT : CORE_KIND_PERF, "cpu %d", id);
	/* §3.7: real sysfs priorities are E-cores LOW, the others NORMAL. */
	assert_equal_set(topology_prio_cpus(t, CPU_PRIO_LOW), ecores, "LOW");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL),
	    "0-15,20-35,40-55,60-75");
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_HIGH), "");
	cpuset_free(ecores);
	topology_free(t);
}

/* A private copy of a recorded machine; returns its root (caller frees). */
static char *
copy_machine(const char *machine)
{
	char	*dir, *cmd;
	int	 rc;

	dir = testlib_tmpdir();
	xasprintf(&cmd, "cp -a '%s/sys' '%s/'", testlib_sysfs(machine), dir);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "%s failed", cmd);
	free(cmd);
	return (dir);
}

static void	run(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2)));

/* Runs a shell command built like printf. */
static void
run(const char *fmt, ...)
{
	char	cmd[4096];
	va_list	ap;
	int	n, rc;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	cr_assert(n > 0 && (size_t)n < sizeof cmd);
	rc = system(cmd);
	cr_assert_eq(rc, 0, "%s failed", cmd);
}

static void
write_file(const char *root, const char *file, const char *text)
{
	char	*path;
	FILE	*f;

	xasprintf(&path, "%s/sys/%s", root, file);
	f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	free(path);
}

/* Discovery of the desktop with file replaced by text must fail naming
 * the file (and the word, when given). */
static void
corrupt(const char *file, const char *text, const char *word)
{
	struct topology	*t = NULL;
	char		*root, *cause = NULL, *path;
	int		 rc;

	root = copy_machine("desktop");
	write_file(root, file, text);
	rc = sysfs_discover(root, &t, &cause);
	cr_assert_lt(rc, 0, "corrupt %s accepted", file);
	cr_assert_null(t);
	cr_assert_not_null(cause);
	xasprintf(&path, "%s/sys/%s", root, file);
	cr_assert_not_null(strstr(cause, path), "cause \"%s\" does not name "
	    "%s", cause, path);
	if (word != NULL)
		cr_assert_not_null(strstr(cause, word), "cause \"%s\" lacks "
		    "\"%s\"", cause, word);
	free(path);
	free(cause);
	free(root);
}

Test(sysfs, malformed_cpu_files)
{
	corrupt("devices/system/cpu/online", "0-\n", NULL);
	corrupt("devices/system/cpu/isolated", "2,x\n", NULL);
	corrupt("devices/system/cpu/cpu3/topology/core_id", "abc\n", "abc");
	corrupt("devices/system/cpu/cpu3/topology/core_id", "\n", NULL);
	corrupt("devices/system/cpu/cpu12/topology/physical_package_id",
	    "0x1\n", NULL);
	corrupt("devices/system/cpu/cpu12/topology/die_id", "1 2\n", NULL);
	corrupt("devices/system/cpu/cpu0/topology/core_cpus_list", "0-\n",
	    NULL);
	corrupt("devices/system/cpu/cpu5/cpufreq/base_frequency", "fast\n",
	    "fast");
	corrupt("devices/system/cpu/cpu1/cache/index2/size", "big\n", "big");
	corrupt("devices/system/cpu/cpu1/cache/index0/level", "one\n", NULL);
	corrupt("devices/system/cpu/cpu1/cache/index3/type", "Sideways\n",
	    "Sideways");
	corrupt("devices/system/cpu/cpu1/cache/index3/shared_cpu_list",
	    "0-19,8192\n", "8191");
}

Test(sysfs, malformed_node_files)
{
	corrupt("devices/system/node/node0/cpulist", "0-x\n", NULL);
	corrupt("devices/system/node/node0/cpulist", "0-9000\n", "8191");
	corrupt("devices/system/node/node0/meminfo",
	    "Node 0 MemFree: 1000 kB\n", "MemTotal");
	corrupt("devices/system/node/node0/meminfo",
	    "Node 0 MemTotal: lots kB\n", "MemTotal");
	corrupt("devices/system/node/node0/meminfo",
	    "Node 0 MemTotal: 12 parsecs\n", "MemTotal");
	corrupt("devices/system/node/node0/distance", "ten\n", "ten");
	corrupt("devices/system/node/node0/distance", "10 20\n", NULL);
}

Test(sysfs, oversized_file)
{
	char	*big;

	/* 300 KiB of blanks before a valid list: bounded reads refuse it. */
	big = malloc(300 * 1024 + 8);
	cr_assert_not_null(big);
	memset(big, ' ', 300 * 1024);
	strcpy(big + 300 * 1024, "0-19\n");
	corrupt("devices/system/cpu/online", big, "larger");
	free(big);
}

Test(sysfs, cpu_id_above_8191)
{
	struct topology	*t = NULL;
	char		*root, *cause = NULL;

	root = copy_machine("desktop");
	run("mkdir '%s/sys/devices/system/cpu/cpu9000'", root);
	cr_assert_lt(sysfs_discover(root, &t, &cause), 0);
	cr_assert_null(t);
	cr_assert_not_null(strstr(cause, "cpu9000"), "%s", cause);
	cr_assert_not_null(strstr(cause, "8191"), "%s", cause);
	free(cause);
	free(root);
}

Test(sysfs, no_node_folder_is_one_node)
{
	struct topology	*t;
	char		*root;

	root = copy_machine("server");
	run("rm -rf '%s/sys/devices/system/node'", root);
	t = testlib_topology(root);
	cr_assert_eq(topology_nnodes(t), 1);
	cr_assert_eq(topology_node(t, 0)->id, 0);
	testlib_assert_set(&topology_node(t, 0)->cpus, "0-111");
	cr_assert_eq(topology_node(t, 0)->type, MEM_TYPE_DRAM);
	cr_assert_eq(topology_cpu(t, 3)->node, 0);
	testlib_assert_set(&topology_package(t, 1)->nodes, "0");
	cr_assert_eq(topology_npackages(t), 2, "packages do not need nodes");
	topology_free(t);
	free(root);
}

Test(sysfs, missing_optional_files)
{
	struct topology	*t;
	char		*root;

	/* No die_id, no cpufreq, no cache, only thread_siblings_list. */
	root = copy_machine("desktop");
	run("cd '%s/sys/devices/system/cpu' && rm -rf cpu*/cpufreq "
	    "cpu*/cache cpu*/topology/die_id cpu*/topology/core_cpus_list "
	    "isolated", root);
	t = testlib_topology(root);
	testlib_assert_set(topology_online(t), "0-19");
	cr_assert_eq(topology_ncores(t), 10);
	assert_siblings(t, 20, 10);
	cr_assert_eq(topology_package(t, 0)->dies[0].id, 0);
	cr_assert_eq(topology_ncaches(t), 0);
	cr_assert_eq(topology_cpu(t, 0)->base_khz, 0);
	testlib_assert_set(topology_prio_cpus(t, CPU_PRIO_NORMAL), "0-19");
	topology_free(t);
	free(root);
}

Test(sysfs, offline_cpus)
{
	struct topology		*t;
	const struct topo_cpu	*cpu;
	char			*root;

	/* Take core {9,19} offline; the kernel drops its topology folder. */
	root = copy_machine("desktop");
	write_file(root, "devices/system/cpu/online", "0-8,10-18\n");
	run("rm -rf '%s/sys/devices/system/cpu/cpu9/topology' "
	    "'%s/sys/devices/system/cpu/cpu19/topology'", root, root);
	t = testlib_topology(root);
	testlib_assert_set(topology_online(t), "0-8,10-18");
	cpu = topology_cpu(t, 19);
	cr_assert_not_null(cpu);
	cr_assert_eq(cpu->online, 0);
	cr_assert_eq(topology_ncores(t), 9);
	testlib_assert_set(&topology_node(t, 0)->cpus, "0-8,10-18");
	testlib_assert_set(&topology_package(t, 0)->cpus, "0-8,10-18");
	topology_free(t);
	free(root);
}

Test(sysfs, missing_root)
{
	struct topology	*t = NULL;
	char		*root, *cause = NULL;

	root = testlib_tmpdir();
	cr_assert_lt(sysfs_discover(root, &t, &cause), 0);
	cr_assert_null(t);
	cr_assert_not_null(strstr(cause, "devices/system/cpu"), "%s", cause);
	free(cause);
	free(root);
}
