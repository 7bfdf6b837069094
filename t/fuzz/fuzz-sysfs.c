/*
 * fuzz-sysfs: the files topology discovery reads, as sysfs_discover reads
 * them from a tree. The input is cut at its NUL bytes (sysfs text never
 * holds one) into the contents of the files below, in this order; an
 * empty piece leaves its file out. The tree has cpu0 and cpu1 and, when
 * any of their files is given, NUMA nodes 0 and 1.
 */

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "topology.h"
#include "fuzzlib.h"

#define CPU	"sys/devices/system/cpu"
#define NODE	"sys/devices/system/node"

static const char *const files[] = {
	CPU "/online",
	CPU "/isolated",
	"sys/devices/cpu_atom/cpus",
	CPU "/cpu0/topology/physical_package_id",
	CPU "/cpu0/topology/die_id",
	CPU "/cpu0/topology/core_id",
	CPU "/cpu0/topology/cluster_id",
	CPU "/cpu0/topology/core_cpus_list",
	CPU "/cpu0/cpufreq/base_frequency",
	CPU "/cpu0/cache/index0/level",
	CPU "/cpu0/cache/index0/type",
	CPU "/cpu0/cache/index0/id",
	CPU "/cpu0/cache/index0/size",
	CPU "/cpu0/cache/index0/shared_cpu_list",
	CPU "/cpu1/online",
	CPU "/cpu1/topology/physical_package_id",
	CPU "/cpu1/topology/core_id",
	CPU "/cpu1/topology/thread_siblings_list",
	CPU "/cpu1/cpufreq/energy_performance_preference",
	NODE "/node0/cpulist",
	NODE "/node0/meminfo",
	NODE "/node0/distance",
	NODE "/node1/cpulist",
	NODE "/node1/meminfo",
	NODE "/node1/distance"
};
#define NFILES		(sizeof files / sizeof files[0])
#define FIRST_NODE	19	/* files[] index of the first node file */

static const char *const dirs[] = {
	"sys", "sys/devices", "sys/devices/system", CPU,
	CPU "/cpu0", CPU "/cpu0/topology", CPU "/cpu0/cpufreq",
	CPU "/cpu0/cache", CPU "/cpu0/cache/index0",
	CPU "/cpu1", CPU "/cpu1/topology", CPU "/cpu1/cpufreq",
	"sys/devices/cpu_atom"
};
#define NDIRS	(sizeof dirs / sizeof dirs[0])

static char	root[PATH_MAX];

static void
in_root(char *buf, const char *rel)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", root, rel) >= PATH_MAX)
		abort();
}

static void
mkdir_in_root(const char *rel)
{
	char	path[PATH_MAX];

	in_root(path, rel);
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		abort();
}

static void
rmdir_in_root(const char *rel)
{
	char	path[PATH_MAX];

	in_root(path, rel);
	if (rmdir(path) != 0 && errno != ENOENT)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct topology	*t = NULL;
	const uint8_t	*p;
	char		 path[PATH_MAX];
	char		*cause = NULL;
	size_t		 i, n;
	int		 nodes = 0;

	if (root[0] == '\0') {
		if (snprintf(root, sizeof root, "%s/root", fuzz_dir()) >=
		    (int)sizeof root || mkdir(root, 0700) != 0)
			abort();
		for (i = 0; i < NDIRS; i++)
			mkdir_in_root(dirs[i]);
	}
	for (i = FIRST_NODE; i < NFILES; i++) {
		fuzz_piece(data, len, (int)i, &p, &n);
		if (n != 0)
			nodes = 1;
	}
	if (nodes) {
		mkdir_in_root(NODE);
		mkdir_in_root(NODE "/node0");
		mkdir_in_root(NODE "/node1");
	}
	for (i = 0; i < NFILES; i++) {
		fuzz_piece(data, len, (int)i, &p, &n);
		in_root(path, files[i]);
		if (n != 0)
			fuzz_write(path, p, n);
		else if (unlink(path) != 0 && errno != ENOENT)
			abort();
	}

	if (sysfs_discover(root, &t, &cause) == 0)
		topology_free(t);
	else if (t != NULL || cause == NULL)
		abort();
	free(cause);

	if (nodes) {
		for (i = FIRST_NODE; i < NFILES; i++) {
			in_root(path, files[i]);
			if (unlink(path) != 0 && errno != ENOENT)
				abort();
		}
		rmdir_in_root(NODE "/node0");
		rmdir_in_root(NODE "/node1");
		rmdir_in_root(NODE);
	}
	return (0);
}
