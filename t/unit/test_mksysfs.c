/*
 * test_mksysfs.c: the synthetic machine generator (R-TOPO-3). Each machine
 * is checked twice: in the files it writes, against the kernel's layout,
 * and through discovery, against the facts the spec describes (n4c16 from
 * anchor-policy.md §11, the 448-CPU and the 4096 sparse machines). Bad
 * specs and an existing tree must be refused with the documented status.
 */
#include "autoconf.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuset.h"
#include "testlib.h"
#include "topology.h"
#include "xmalloc.h"

#define N4C16	"packages=2,nodes=2,cores=2,threads=2,numbering=adjacent,mem=2G"
#define M448	"packages=2,nodes=4,cores=28,threads=2"
#define M4096	"packages=2,nodes=8,cores=128,threads=2,sparse=2"

#define GIB	(1024ULL * 1024 * 1024)

/* The whole content of DIR/sys/REL, which must exist. */
static char *
slurp(const char *dir, const char *rel)
{
	char	*path, *buf;
	size_t	 size = 256, len = 0, n;
	FILE	*f;

	xasprintf(&path, "%s/sys/%s", dir, rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	buf = xmalloc(size);
	while ((n = fread(buf + len, 1, size - len - 1, f)) > 0) {
		len += n;
		if (size - len - 1 == 0) {
			size *= 2;
			buf = xreallocarray(buf, size, 1);
		}
	}
	buf[len] = '\0';
	fclose(f);
	free(path);
	return (buf);
}

/* A sysfs attribute holds its value and the kernel's newline. */
static void
assert_file(const char *dir, const char *rel, const char *want)
{
	char	*got = slurp(dir, rel), *line;

	xasprintf(&line, "%s\n", want);
	cr_assert_str_eq(got, line, "%s is \"%s\", expected \"%s\\n\"", rel,
	    got, want);
	free(line);
	free(got);
}

static void
assert_contains(const char *dir, const char *rel, const char *want)
{
	char	*got = slurp(dir, rel);

	cr_assert_not_null(strstr(got, want), "%s is \"%s\", without \"%s\"",
	    rel, got, want);
	free(got);
}

static int
exists(const char *dir, const char *rel)
{
	struct stat	 sb;
	char		*path;
	int		 rc;

	xasprintf(&path, "%s/sys/%s", dir, rel);
	rc = lstat(path, &sb) == 0;
	free(path);
	return (rc);
}

static const char *
builddir(void)
{
	const char	*b = getenv("TOPOAWARE_BUILDDIR");

	cr_assert(b != NULL && *b != '\0', "TOPOAWARE_BUILDDIR is not set");
	return (b);
}

/*
 * Runs the program with ARGS (already quoted) and returns its exit status;
 * what it printed on stderr goes to *err (caller frees) when err is set.
 */
static int
run(const char *args, char **err)
{
	char	*tmp, *cmd, *errfile;
	int	 rc;

	tmp = testlib_tmpdir();
	xasprintf(&errfile, "%s/stderr", tmp);
	xasprintf(&cmd, "'%s/topoaware-mksysfs' %s >/dev/null 2>'%s'",
	    builddir(), args, errfile);
	rc = system(cmd);
	cr_assert(rc != -1 && WIFEXITED(rc), "%s did not exit", cmd);
	if (err != NULL) {
		FILE	*f = fopen(errfile, "r");
		size_t	 n;

		cr_assert_not_null(f);
		*err = xcalloc(1, 4096);
		n = fread(*err, 1, 4095, f);
		(*err)[n] = '\0';
		fclose(f);
	}
	unlink(errfile);
	rmdir(tmp);
	free(errfile);
	free(cmd);
	free(tmp);
	return (WEXITSTATUS(rc));
}

static int
mksysfs(const char *opts, const char *spec, const char *dir, char **err)
{
	char	*args;
	int	 rc;

	xasprintf(&args, "%s '%s' '%s'", opts, spec, dir);
	rc = run(args, err);
	free(args);
	return (rc);
}

static void
assert_node_memory(const struct topology *t, int id, uint64_t want)
{
	const struct topo_node	*n = topology_node_by_id(t, id);

	cr_assert_not_null(n, "no node %d", id);
	cr_assert_eq(n->memory, want, "node %d has %llu bytes, expected %llu",
	    id, (unsigned long long)n->memory, (unsigned long long)want);
}

/* The thread siblings of a CPU, as discovery groups them into cores. */
static void
assert_siblings(const struct topology *t, int cpu, const char *want)
{
	const struct topo_cpu	*c = topology_cpu(t, cpu);
	const struct topo_core	*core;

	cr_assert_not_null(c, "no cpu %d", cpu);
	core = topology_core(t, c->core);
	cr_assert_not_null(core, "cpu %d has no core", cpu);
	testlib_assert_set(&core->threads, want);
}

/* n4c16: the kernel files, read directly. */
Test(mksysfs, n4c16_files)
{
	char	*dir = testlib_mksysfs(N4C16), rel[128], want[64], *got;
	char	 target[PATH_MAX], path[PATH_MAX];
	ssize_t	 n;
	int	 cpu;

	assert_file(dir, "devices/system/cpu/online", "0-15");
	assert_file(dir, "devices/system/cpu/possible", "0-15");
	assert_file(dir, "devices/system/cpu/present", "0-15");
	assert_file(dir, "devices/system/cpu/offline", "");
	assert_file(dir, "devices/system/cpu/isolated", "");
	assert_file(dir, "devices/system/node/online", "0-3");
	assert_file(dir, "devices/system/node/has_cpu", "0-3");
	assert_file(dir, "devices/system/node/has_memory", "0-3");
	/* Consecutive thread numbering: core k is CPUs 2k and 2k+1. */
	for (cpu = 0; cpu < 16; cpu++) {
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/topology/"
		    "thread_siblings_list", cpu);
		snprintf(want, sizeof want, "%d-%d", cpu & ~1, (cpu & ~1) + 1);
		assert_file(dir, rel, want);
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/topology/"
		    "physical_package_id", cpu);
		snprintf(want, sizeof want, "%d", cpu / 8);
		assert_file(dir, rel, want);
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/topology/"
		    "package_cpus_list", cpu);
		assert_file(dir, rel, cpu < 8 ? "0-7" : "8-15");
		/* Cores of a package are numbered from 0 in the package. */
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/topology/"
		    "core_id", cpu);
		snprintf(want, sizeof want, "%d", (cpu % 8) / 2);
		assert_file(dir, rel, want);
		/* Every CPU is in exactly the node 4k..4k+3 says. */
		snprintf(path, sizeof path, "%s/sys/devices/system/cpu/cpu%d/"
		    "node%d", dir, cpu, cpu / 4);
		n = readlink(path, target, sizeof target - 1);
		cr_assert(n > 0, "%s: %s", path, strerror(errno));
		target[n] = '\0';
		snprintf(want, sizeof want, "../../node/node%d", cpu / 4);
		cr_assert_str_eq(target, want);
		snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/online",
		    cpu);
		if (cpu == 0)
			cr_assert(!exists(dir, rel), "cpu0 has an online file");
		else
			assert_file(dir, rel, "1");
	}
	assert_file(dir, "devices/system/node/node0/cpulist", "0-3");
	assert_file(dir, "devices/system/node/node1/cpulist", "4-7");
	assert_file(dir, "devices/system/node/node2/cpulist", "8-11");
	assert_file(dir, "devices/system/node/node3/cpulist", "12-15");
	/* 11 within a package (0-1, 2-3), 21 across. */
	assert_file(dir, "devices/system/node/node0/distance", "10 11 21 21");
	assert_file(dir, "devices/system/node/node1/distance", "11 10 21 21");
	assert_file(dir, "devices/system/node/node2/distance", "21 21 10 11");
	assert_file(dir, "devices/system/node/node3/distance", "21 21 11 10");
	/* 2 GiB is 2097152 kB, printed "%8lu kB" after the label. */
	got = slurp(dir, "devices/system/node/node3/meminfo");
	cr_assert(strncmp(got, "Node 3 MemTotal:        2097152 kB\n",
	    strlen("Node 3 MemTotal:        2097152 kB\n")) == 0,
	    "meminfo starts \"%.40s\"", got);
	free(got);
	assert_contains(dir, "devices/system/node/node3/meminfo",
	    "Node 3 MemFree:         2097152 kB\n");
	/* L1 and L2 per core, L3 per die (the package here). */
	assert_file(dir, "devices/system/cpu/cpu13/cache/index0/type", "Data");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index1/type",
	    "Instruction");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index0/level", "1");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index2/level", "2");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index3/level", "3");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index0/"
	    "shared_cpu_list", "12-13");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index2/"
	    "shared_cpu_list", "12-13");
	assert_file(dir, "devices/system/cpu/cpu13/cache/index3/"
	    "shared_cpu_list", "8-15");
	/* Writable files are the CPU's own, never links shared with
	 * other CPUs: writing one must not change another. */
	for (cpu = 1; cpu < 16; cpu++) {
		struct stat	sb;

		snprintf(path, sizeof path, "%s/sys/devices/system/cpu/cpu%d/"
		    "online", dir, cpu);
		cr_assert_eq(stat(path, &sb), 0);
		cr_assert_eq(sb.st_nlink, 1, "%s has %lu links", path,
		    (unsigned long)sb.st_nlink);
	}
	cr_assert(!exists(dir, "devices/system/cpu/cpu16"));
	cr_assert(!exists(dir, "devices/system/node/node4"));
	cr_assert(!exists(dir, "devices/cpu_atom"), "not a hybrid machine");
	cr_assert(!exists(dir, "devices/system/cpu/cpu0/cpufreq"));
	free(dir);
}

/* n4c16 as discovery sees it: the facts of anchor-policy.md §11. */
Test(mksysfs, n4c16_discovered)
{
	char			*dir = testlib_mksysfs(N4C16);
	struct topology		*t = testlib_topology(dir);
	const struct topo_package *p;
	const struct topo_node	*n;
	int			 i, j;

	testlib_assert_set(topology_online(t), "0-15");
	cr_assert(cpuset_empty(topology_isolated(t)));
	cr_assert_eq(topology_npackages(t), 2);
	p = topology_package(t, 0);
	cr_assert_eq(p->id, 0);
	testlib_assert_set(&p->cpus, "0-7");
	testlib_assert_set(&p->nodes, "0-1");
	p = topology_package(t, 1);
	cr_assert_eq(p->id, 1);
	testlib_assert_set(&p->cpus, "8-15");
	testlib_assert_set(&p->nodes, "2-3");
	cr_assert_eq(topology_nnodes(t), 4);
	testlib_assert_set(&topology_node_by_id(t, 0)->cpus, "0-3");
	testlib_assert_set(&topology_node_by_id(t, 1)->cpus, "4-7");
	testlib_assert_set(&topology_node_by_id(t, 2)->cpus, "8-11");
	testlib_assert_set(&topology_node_by_id(t, 3)->cpus, "12-15");
	for (i = 0; i < 16; i += 2) {
		char	want[16];

		snprintf(want, sizeof want, "%d-%d", i, i + 1);
		assert_siblings(t, i, want);
		assert_siblings(t, i + 1, want);
	}
	cr_assert_eq(topology_threads_per_core(t), 2);
	cr_assert_eq(topology_ncores(t), 8);
	for (i = 0; i < 4; i++) {
		n = topology_node_by_id(t, i);
		cr_assert_eq(n->package, i / 2);
		cr_assert_eq(n->memory, 2 * GIB);
		for (j = 0; j < 4; j++)
			cr_assert_eq(topology_node_distance(t, i, j),
			    i == j ? 10 : i / 2 == j / 2 ? 11 : 21,
			    "distance %d-%d", i, j);
	}
	cr_assert(!topology_hybrid(t));
	topology_free(t);
	free(dir);
}

/* 448 CPUs, Intel numbering: thread t of core c is CPU c + 224 t. */
Test(mksysfs, m448_files)
{
	char	*dir = testlib_mksysfs(M448), rel[128], want[64];
	int	 cpu, core;

	assert_file(dir, "devices/system/cpu/online", "0-447");
	/* Package p holds cores 112p..112p+111 and their second threads. */
	assert_file(dir, "devices/system/cpu/cpu0/topology/package_cpus_list",
	    "0-111,224-335");
	assert_file(dir, "devices/system/cpu/cpu447/topology/"
	    "package_cpus_list", "112-223,336-447");
	/* Node k holds cores 28k..28k+27. */
	assert_file(dir, "devices/system/node/node0/cpulist", "0-27,224-251");
	assert_file(dir, "devices/system/node/node5/cpulist",
	    "140-167,364-391");
	assert_file(dir, "devices/system/node/node7/cpulist",
	    "196-223,420-447");
	assert_file(dir, "devices/system/node/node0/distance",
	    "10 11 11 11 21 21 21 21");
	assert_file(dir, "devices/system/node/node6/distance",
	    "21 21 21 21 11 11 10 11");
	for (core = 0; core < 224; core += 37) {
		for (cpu = core; cpu < 448; cpu += 224) {
			snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/"
			    "topology/thread_siblings_list", cpu);
			snprintf(want, sizeof want, "%d,%d", core, core + 224);
			assert_file(dir, rel, want);
			snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/"
			    "topology/core_id", cpu);
			snprintf(want, sizeof want, "%d", core % 112);
			assert_file(dir, rel, want);
		}
	}
	cr_assert(!exists(dir, "devices/system/cpu/cpu448"));
	free(dir);
}

Test(mksysfs, m448_discovered)
{
	char			*dir = testlib_mksysfs(M448), want[32];
	struct topology		*t = testlib_topology(dir);
	const struct topo_package *p;
	const struct topo_node	*n;
	int			 i;

	cr_assert_eq(cpuset_count(topology_online(t)), 2 * 4 * 28 * 2);
	cr_assert_eq(topology_npackages(t), 2);
	cr_assert_eq(topology_nnodes(t), 2 * 4);
	cr_assert_eq(topology_ncores(t), 2 * 4 * 28);
	cr_assert_eq(topology_threads_per_core(t), 2);
	for (i = 0; i < 2; i++) {
		p = topology_package(t, i);
		cr_assert_eq(cpuset_count(&p->cpus), 4 * 28 * 2);
		cr_assert_eq(cpuset_count(&p->nodes), 4);
	}
	for (i = 0; i < 8; i++) {
		n = topology_node_by_id(t, i);
		cr_assert_not_null(n);
		cr_assert_eq(cpuset_count(&n->cpus), 28 * 2);
		cr_assert_eq(n->package, i / 4);
		cr_assert(cpuset_has(&n->cpus, 28 * i));
		cr_assert(cpuset_has(&n->cpus, 28 * i + 224));
	}
	snprintf(want, sizeof want, "%d,%d", 223, 447);
	assert_siblings(t, 447, want);
	topology_free(t);
	free(dir);
}

/* 2 x 8 x 128 x 2 = 4096 CPUs, every id doubled: 0, 2, ..., 8190. */
Test(mksysfs, m4096_sparse)
{
	char			*dir = testlib_mksysfs(M4096), *got;
	struct topology		*t;
	const struct cpuset	*on;
	int			 i, id;

	/* Thread 1 of core c is (c + 2048) * 2. */
	assert_file(dir, "devices/system/cpu/cpu8190/topology/"
	    "thread_siblings_list", "4094,8190");
	assert_file(dir, "devices/system/cpu/cpu2/topology/"
	    "thread_siblings_list", "2,4098");
	cr_assert(!exists(dir, "devices/system/cpu/cpu1"));
	cr_assert(!exists(dir, "devices/system/cpu/cpu8191"));
	got = slurp(dir, "devices/system/cpu/online");
	cr_assert(strncmp(got, "0,2,4,6,", 8) == 0, "online starts %.20s",
	    got);
	free(got);

	t = testlib_topology(dir);
	on = topology_online(t);
	cr_assert_eq(cpuset_count(on), 2 * 8 * 128 * 2);
	cr_assert_eq(cpuset_first(on), 0);
	cr_assert_eq(cpuset_last(on), 8190);
	cr_assert(!cpuset_has(on, 1));
	cr_assert_null(topology_cpu(t, 1));
	i = 0;
	CPUSET_FOREACH(id, on)
		cr_assert_eq(id, 2 * i++, "the ids are not 0, 2, 4, ...");
	cr_assert_eq(topology_npackages(t), 2);
	cr_assert_eq(topology_nnodes(t), 16);
	cr_assert_eq(topology_ncores(t), 2048);
	cr_assert_eq(topology_threads_per_core(t), 2);
	cr_assert_eq(cpuset_count(&topology_package(t, 1)->cpus), 2048);
	cr_assert_eq(cpuset_count(&topology_node_by_id(t, 15)->cpus), 256);
	topology_free(t);
	free(dir);
}

/*
 * One package, two nodes of four cores: core c has CPUs c and c + 8.
 * Isolated 2-3,10-11 are cores 2-3; offline 6 is half of core 6.
 */
#define ISOOFF	"packages=1,nodes=2,cores=4,threads=2,mem=512M," \
		"isolated=2-3,10-11,offline=6"

Test(mksysfs, isolated_offline_files)
{
	char	*dir = testlib_mksysfs(ISOOFF);

	assert_file(dir, "devices/system/cpu/isolated", "2-3,10-11");
	assert_file(dir, "devices/system/cpu/offline", "6");
	assert_file(dir, "devices/system/cpu/online", "0-5,7-15");
	assert_file(dir, "devices/system/cpu/present", "0-15");
	assert_file(dir, "devices/system/cpu/cpu6/online", "0");
	assert_file(dir, "devices/system/cpu/cpu14/online", "1");
	/* The kernel drops topology and caches of an offline CPU and
	 * leaves it out of its siblings' lists. */
	cr_assert(!exists(dir, "devices/system/cpu/cpu6/topology"));
	cr_assert(!exists(dir, "devices/system/cpu/cpu6/cache"));
	cr_assert(exists(dir, "devices/system/cpu/cpu6/node1"));
	assert_file(dir, "devices/system/cpu/cpu14/topology/"
	    "thread_siblings_list", "14");
	assert_file(dir, "devices/system/cpu/cpu14/topology/"
	    "package_cpus_list", "0-5,7-15");
	assert_file(dir, "devices/system/node/node1/cpulist",
	    "4-5,7,12-15");
	assert_contains(dir, "devices/system/node/node1/meminfo",
	    "Node 1 MemTotal:         524288 kB\n");
	free(dir);
}

Test(mksysfs, isolated_offline_discovered)
{
	char		*dir = testlib_mksysfs(ISOOFF);
	struct topology	*t = testlib_topology(dir);

	testlib_assert_set(topology_online(t), "0-5,7-15");
	testlib_assert_set(topology_isolated(t), "2-3,10-11");
	testlib_assert_set(&topology_node_by_id(t, 0)->cpus, "0-3,8-11");
	testlib_assert_set(&topology_node_by_id(t, 1)->cpus, "4-5,7,12-15");
	assert_siblings(t, 14, "14");
	assert_siblings(t, 2, "2,10");
	assert_node_memory(t, 1, 512ULL * 1024 * 1024);
	topology_free(t);
	free(dir);
}

/*
 * n4c16 with two memory-only nodes: node 4 hangs off node 0, node 5 off
 * node 1 (round robin), 17 from there and 28 from anything else.
 */
#define MEMNODES	"packages=2,nodes=2,cores=2,threads=2," \
			"numbering=adjacent,memnodes=2,memnodesize=8G"

Test(mksysfs, memnodes_files)
{
	char	*dir = testlib_mksysfs(MEMNODES);

	assert_file(dir, "devices/system/node/online", "0-5");
	assert_file(dir, "devices/system/node/has_cpu", "0-3");
	assert_file(dir, "devices/system/node/has_memory", "0-5");
	assert_file(dir, "devices/system/node/node4/cpulist", "");
	assert_file(dir, "devices/system/node/node5/cpulist", "");
	assert_file(dir, "devices/system/node/node0/distance",
	    "10 11 21 21 17 28");
	assert_file(dir, "devices/system/node/node2/distance",
	    "21 21 10 11 28 28");
	assert_file(dir, "devices/system/node/node4/distance",
	    "17 28 28 28 10 28");
	assert_file(dir, "devices/system/node/node5/distance",
	    "28 17 28 28 28 10");
	assert_contains(dir, "devices/system/node/node5/meminfo",
	    "Node 5 MemTotal:        8388608 kB\n");
	free(dir);
}

Test(mksysfs, memnodes_discovered)
{
	char		*dir = testlib_mksysfs(MEMNODES);
	struct topology	*t = testlib_topology(dir);
	int		 i;

	cr_assert_eq(topology_nnodes(t), 6);
	for (i = 4; i < 6; i++) {
		cr_assert(cpuset_empty(&topology_node_by_id(t, i)->cpus));
		assert_node_memory(t, i, 8 * GIB);
		cr_assert_eq(topology_node_by_id(t, i)->package, -1);
	}
	assert_node_memory(t, 0, 2 * GIB);
	cr_assert_eq(topology_node_distance(t, 4, 0), 17);
	cr_assert_eq(topology_node_distance(t, 0, 4), 17);
	cr_assert_eq(topology_node_distance(t, 4, 1), 28);
	cr_assert_eq(topology_node_distance(t, 5, 1), 17);
	cr_assert_eq(topology_node_distance(t, 4, 5), 28);
	cr_assert_eq(cpuset_count(topology_online(t)), 16);
	topology_free(t);
	free(dir);
}

/* The Go policy's e2e machine n6 (TESTLIB_N6). */
Test(mksysfs, n6_sizes_and_distances)
{
	char		*dir = testlib_mksysfs(TESTLIB_N6);
	struct topology	*t = testlib_topology(dir);
	static const int row3[] = { 30, 15, 35, 10, 72, 62 };
	int		 i;

	assert_file(dir, "devices/system/node/node3/distance",
	    "30 15 35 10 72 62");
	assert_contains(dir, "devices/system/node/node2/meminfo",
	    "Node 2 MemTotal:        1048576 kB\n");
	cr_assert_eq(topology_nnodes(t), 6);
	assert_node_memory(t, 0, 2 * GIB);
	assert_node_memory(t, 3, 1 * GIB);
	assert_node_memory(t, 4, 4 * GIB);
	for (i = 0; i < 6; i++)
		cr_assert_eq(topology_node_distance(t, 3, i), row3[i]);
	/* Classified as Go classifies them: smaller than DRAM is HBM. */
	cr_assert_eq(topology_node_by_id(t, 1)->type, MEM_TYPE_DRAM);
	cr_assert_eq(topology_node_by_id(t, 2)->type, MEM_TYPE_HBM);
	cr_assert_eq(topology_node_by_id(t, 3)->type, MEM_TYPE_HBM);
	cr_assert_eq(topology_node_by_id(t, 5)->type, MEM_TYPE_PMEM);
	topology_free(t);
	free(dir);
}

/* Eight cores, the last four efficient: CPUs 4-7 and 12-15. */
#define HYBRID	"cores=8,threads=2,ecores=4,basefreq=2.7G,ebasefreq=1800M," \
		"epp=balance_performance"

Test(mksysfs, hybrid_cpufreq_files)
{
	char	*dir = testlib_mksysfs(HYBRID), *a, *b;

	assert_file(dir, "devices/cpu_core/cpus", "0-3,8-11");
	assert_file(dir, "devices/cpu_atom/cpus", "4-7,12-15");
	/* E-cores share an L2 by four; P-cores have their own. */
	assert_file(dir, "devices/system/cpu/cpu5/cache/index2/"
	    "shared_cpu_list", "4-7,12-15");
	assert_file(dir, "devices/system/cpu/cpu1/cache/index2/"
	    "shared_cpu_list", "1,9");
	a = slurp(dir, "devices/system/cpu/cpu4/topology/cluster_id");
	b = slurp(dir, "devices/system/cpu/cpu15/topology/cluster_id");
	cr_assert_str_eq(a, b, "E-cores of one L2 are one cluster");
	free(a);
	free(b);
	a = slurp(dir, "devices/system/cpu/cpu0/topology/cluster_id");
	b = slurp(dir, "devices/system/cpu/cpu1/topology/cluster_id");
	cr_assert_str_neq(a, b, "P-cores are clusters of their own");
	free(a);
	free(b);
	assert_file(dir, "devices/system/cpu/cpu3/cpufreq/base_frequency",
	    "2700000");
	assert_file(dir, "devices/system/cpu/cpu12/cpufreq/base_frequency",
	    "1800000");
	assert_file(dir, "devices/system/cpu/cpu9/cpufreq/"
	    "energy_performance_preference", "balance_performance");
	free(dir);
}

Test(mksysfs, hybrid_cpufreq_discovered)
{
	char		*dir = testlib_mksysfs(HYBRID);
	struct topology	*t = testlib_topology(dir);
	int		 id;

	cr_assert(topology_hybrid(t));
	for (id = 0; id < 16; id++) {
		const struct topo_cpu	*c = topology_cpu(t, id);
		int			 e = id % 8 >= 4;

		cr_assert_not_null(c);
		cr_assert_eq(c->kind, e ? CORE_KIND_EFFICIENT : CORE_KIND_PERF,
		    "cpu %d", id);
		cr_assert_eq(c->base_khz, e ? 1800000UL : 2700000UL,
		    "cpu %d", id);
	}
	topology_free(t);
	free(dir);
}

/* E-cores by CPU list: the n4c16 machine of the Go policy's hybrid case,
 * P-cores {0,1} and {4,5}, every other core efficient. */
Test(mksysfs, hybrid_by_cpu_list)
{
	char		*dir = testlib_mksysfs("packages=2,nodes=2,cores=2,"
	    "threads=2,numbering=adjacent,ecpus=2-3,6-15");
	struct topology	*t = testlib_topology(dir);
	int		 id;

	assert_file(dir, "devices/cpu_core/cpus", "0-1,4-5");
	assert_file(dir, "devices/cpu_atom/cpus", "2-3,6-15");
	cr_assert(topology_hybrid(t));
	for (id = 0; id < 16; id++) {
		int	p = id == 0 || id == 1 || id == 4 || id == 5;

		cr_assert_eq(topology_cpu(t, id)->kind, p ? CORE_KIND_PERF :
		    CORE_KIND_EFFICIENT, "cpu %d", id);
	}
	topology_free(t);
	free(dir);
}

/* Two dies: die_id and die lists, core ids still counted per package. */
Test(mksysfs, dies)
{
	char	*dir = testlib_mksysfs("packages=2,dies=2,cores=2,threads=2,"
	    "numbering=adjacent");

	assert_file(dir, "devices/system/cpu/cpu5/topology/die_id", "1");
	assert_file(dir, "devices/system/cpu/cpu5/topology/die_cpus_list",
	    "4-7");
	assert_file(dir, "devices/system/cpu/cpu5/topology/package_cpus_list",
	    "0-7");
	assert_file(dir, "devices/system/cpu/cpu5/topology/core_id", "2");
	assert_file(dir, "devices/system/cpu/cpu13/topology/die_id", "1");
	assert_file(dir, "devices/system/cpu/cpu13/topology/core_id", "2");
	assert_file(dir, "devices/system/cpu/cpu5/cache/index3/"
	    "shared_cpu_list", "4-7");
	/* One node per die, all four in one package are 11 apart. */
	assert_file(dir, "devices/system/node/node1/distance", "11 10 21 21");
	free(dir);
}

/* Nothing but sys/ (when sys_ok) is in DIR: no work folder is left. */
static void
assert_only(const char *dir, int sys_ok)
{
	DIR		*d = opendir(dir);
	struct dirent	*e;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		cr_assert(strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 ||
		    (sys_ok && strcmp(e->d_name, "sys") == 0),
		    "%s/%s is left", dir, e->d_name);
	closedir(d);
}

static void
refused(const char *spec, const char *named)
{
	char	*dir = testlib_tmpdir(), *err;
	int	 rc;

	rc = mksysfs("", spec, dir, &err);
	cr_assert_eq(rc, 2, "spec \"%s\" exits %d, expected 2", spec, rc);
	cr_assert_not_null(strstr(err, named), "spec \"%s\": message \"%s\" "
	    "does not name \"%s\"", spec, err, named);
	cr_assert(!exists(dir, ""), "spec \"%s\" wrote a tree", spec);
	assert_only(dir, 0);
	free(err);
	free(dir);
}

Test(mksysfs, bad_specs_refused)
{
	refused("packages=0", "packages");
	refused("cores=2,threads=0", "threads");
	refused("threads=two", "threads");
	refused("cores=-1", "cores");
	refused("colour=blue", "colour");
	refused("cores=2,cores=3", "twice");
	refused("cores=2,,threads=1", "empty");
	refused("cores2", "cores2");
	refused("numbering=diagonal", "numbering");
	refused("mem=2X", "mem");
	refused("mem=1000", "mem");
	refused("mem=", "mem");
	refused("basefreq=0", "basefreq");
	refused("epp=fast", "epp");
	refused("cores=4,ecores=4", "ecores");
	refused("ebasefreq=1G", "ebasefreq");
	refused("cores=4,ecores=2,ebasefreq=1G", "basefreq");
	refused("cores=2,numbering=adjacent,ecpus=1", "threads of one core");
	refused("cores=2,threads=1,ecpus=0-1", "performance core");
	refused("cores=2,threads=1,ecores=1,ecpus=1", "one of them");
	refused("cores=2,threads=1,ecpus=7", "ecpus");
	refused("memnodesize=4G", "memnodesize");
	refused("memnodes=3,memnodesize=1G/2G", "2 sizes for 3");
	refused("memnodes=2,memnodesize=1G/2X", "memnodesize");
	refused("distances=10:11", "more numbers than nodes");
	refused("distances=10/10", "2 rows, not 1");
	refused("memnodes=1,distances=10:21/21:11", "row 1, column 1");
	refused("memnodes=1,distances=10:9/9:10", "row 0, column 1");
	refused("memnodes=1,distances=10:21/21", "row 1 has 1");
	refused("memnodes=1,distances=10:21:30/21:10", "more numbers");
	refused("memnodes=1,distances=10:x/21:10", "not a number");
	refused("memnodes=1,distances=10:21/21:10/", "3 rows");
	refused("cores=2,isolated=9", "isolated");
	refused("cores=2,isolated=0-x", "isolated");
	refused("cores=2,offline=0", "cpu0");
	refused("cores=2,sparse=2,offline=1", "offline");
	/* 4096 ids doubled need 8190 at most; tripled they need 12285. */
	refused("packages=2,nodes=8,cores=128,threads=2,sparse=3", "8192");
	refused("cores=1,threads=2,sparse=8192", "8192");
	refused("packages=2,nodes=8,cores=128,threads=5", "8192");
	refused("packages=9000", "packages");
}

Test(mksysfs, edges_accepted)
{
	char	*dir = testlib_tmpdir();

	/* Id 8191 is the last that fits; the empty spec is one core of
	 * two threads. */
	cr_assert_eq(mksysfs("", "cores=1,threads=2,sparse=8191", dir, NULL),
	    0);
	assert_file(dir, "devices/system/cpu/online", "0,8191");
	assert_file(dir, "devices/system/cpu/cpu8191/topology/"
	    "thread_siblings_list", "0,8191");
	free(dir);
	dir = testlib_tmpdir();
	cr_assert_eq(mksysfs("", "", dir, NULL), 0);
	assert_file(dir, "devices/system/cpu/online", "0-1");
	assert_file(dir, "devices/system/cpu/cpu1/topology/core_cpus_list",
	    "0-1");
	free(dir);
}

Test(mksysfs, usage)
{
	char	*dir = testlib_tmpdir(), *args, *err;

	cr_assert_eq(run("--help", NULL), 0);
	cr_assert_eq(run("", NULL), 2);
	cr_assert_eq(run("cores=2", NULL), 2);
	xasprintf(&args, "--frobnicate cores=2 '%s'", dir);
	cr_assert_eq(run(args, &err), 2);
	cr_assert(!exists(dir, ""));
	free(err);
	free(args);
	free(dir);
}

Test(mksysfs, existing_tree_needs_force)
{
	char	*dir = testlib_tmpdir(), *err;

	cr_assert_eq(mksysfs("", N4C16, dir, NULL), 0);
	assert_only(dir, 1);
	cr_assert_eq(mksysfs("", "cores=1", dir, &err), 1);
	cr_assert_not_null(strstr(err, "--force"), "message \"%s\"", err);
	free(err);
	assert_file(dir, "devices/system/cpu/online", "0-15");

	/* --force replaces the whole tree: nothing of n4c16 is left. */
	cr_assert_eq(mksysfs("--force", "cores=1,threads=1", dir, NULL), 0);
	assert_file(dir, "devices/system/cpu/online", "0");
	cr_assert(!exists(dir, "devices/system/cpu/cpu1"));
	cr_assert(!exists(dir, "devices/system/node/node1"));
	assert_only(dir, 1);
	free(dir);
}
