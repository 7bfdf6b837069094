/*
 * The machine's hardware topology as a pure model: CPUs, cores, clusters,
 * dies, packages, caches and NUMA nodes, with CPU priorities and memory
 * types derived from what discovery found.
 *
 * Discovery (src/daemon/sysfs.c) or a test builds one with topology_new(),
 * topology_add_cpu(), topology_add_cache(), topology_add_node() and
 * topology_set_isolated(), then calls topology_finish(), which checks the
 * pieces against each other and derives everything else. After that the
 * model is read-only except for the override hooks at the end of this file.
 *
 * Element structs are public for fast read access; the topology owns them
 * and every pointer returned stays valid until topology_free() or the next
 * topology_finish() (builders may be called again after a finish; the next
 * finish re-derives everything from all inputs). topology_set_cluster()
 * and topology_set_kind() replace the dies' cluster arrays.
 */
#ifndef TOPOAWARE_TOPOLOGY_H
#define TOPOAWARE_TOPOLOGY_H

#include <stdint.h>

#include "cpuset.h"

/* CPU priorities of the allocator; NONE means "no preference". */
enum cpu_prio {
	CPU_PRIO_HIGH = 0,
	CPU_PRIO_NORMAL = 1,
	CPU_PRIO_LOW = 2,
	CPU_PRIO_NONE = 3
};
#define CPU_PRIO_COUNT	3	/* the real priorities: HIGH, NORMAL, LOW */

enum core_kind {
	CORE_KIND_UNKNOWN = 0,	/* not a hybrid machine */
	CORE_KIND_PERF,		/* devices/cpu_core */
	CORE_KIND_EFFICIENT	/* devices/cpu_atom */
};

enum mem_type {
	MEM_TYPE_DRAM = 0,
	MEM_TYPE_PMEM,
	MEM_TYPE_HBM
};

/* What discovery knows of one CPU. */
struct topo_cpu_info {
	int		 id;
	int		 online;
	int		 package;	/* physical_package_id */
	int		 die;		/* die_id, 0 when absent */
	int		 cluster;	/* cluster_id, -1 when absent */
	int		 core;		/* core_id, unique within a package */
	enum core_kind	 kind;
	unsigned long	 base_khz;	/* cpufreq base frequency, 0 unknown */
	const char	*epp;		/* energy_performance_preference or NULL */
	const struct cpuset *threads;	/* thread siblings incl. itself, or NULL */
};

struct topo_cpu {
	int		 id;
	int		 online;
	int		 isolated;
	int		 package;	/* package id */
	int		 die;		/* die id within the package */
	int		 cluster;	/* logical cluster index within the die, -1 none */
	int		 core;		/* index into the topology's cores */
	int		 node;		/* NUMA node id */
	enum core_kind	 kind;
	enum cpu_prio	 prio;
	unsigned long	 base_khz;
	int		 ncaches;
	int		*caches;	/* indexes of topology caches, by level */
};

struct topo_core {
	int		 index;
	int		 package;
	int		 die;
	int		 core_id;	/* sysfs core_id */
	struct cpuset	 threads;	/* online threads of this core */
};

struct topo_cluster {
	int		 index;		/* within the die */
	struct cpuset	 cpus;
	enum core_kind	 kind;		/* of its first CPU */
	int		 id;		/* cluster_id (of its lowest CPU when
					   merged); ascending with index */
};

struct topo_die {
	int		 id;
	int		 package;
	struct cpuset	 cpus;		/* online CPUs */
	struct cpuset	 nodes;		/* node ids with CPUs in the die */
	int		 nclusters;
	struct topo_cluster *clusters;	/* logical clusters, see topology.c */
};

struct topo_package {
	int		 id;
	struct cpuset	 cpus;		/* online CPUs */
	struct cpuset	 nodes;		/* node ids with CPUs in the package */
	int		 ndies;
	struct topo_die	*dies;		/* ascending die id */
};

struct topo_cache {
	int		 level;
	char		 type;		/* 'D'ata, 'I'nstruction, 'U'nified */
	int		 id;		/* cache id, -1 when absent */
	uint64_t	 size;		/* bytes, 0 unknown */
	struct cpuset	 cpus;		/* shared_cpu_list */
};

struct topo_node {
	int		 id;
	struct cpuset	 cpus;		/* online CPUs, empty for memory-only */
	uint64_t	 memory;	/* MemTotal in bytes */
	enum mem_type	 type;
	int		 package;	/* package of its CPUs, -1 without CPUs */
	int		*distance;	/* by node index, symmetric */
};

struct topology;

struct topology	*topology_new(void);
void		 topology_free(struct topology *);

/*
 * Builders: 0 or a negative errno with *cause (caller frees). A CPU id
 * or node id outside 0-8191 or given twice is refused. The topology
 * copies what it is given. topology_add_cache() is called once per CPU
 * that reports the cache; equal level, type and CPU set are one cache.
 * A node's distance row is indexed by node index (ascending id) and has
 * one entry per node, or none (ndistance 0: 10 to itself, 20 elsewhere).
 * Without any node, finishing makes node 0 of all CPUs, without memory.
 * topology_finish() also refuses thread siblings that are not known
 * CPUs, rows of the wrong length, a CPU in two nodes and an online CPU
 * without package/die/core ids or outside every node (when nodes exist).
 */
int	 topology_add_cpu(struct topology *, const struct topo_cpu_info *,
	     char **);
int	 topology_add_cache(struct topology *, int cpu, int level, char type,
	     int id, uint64_t size, const struct cpuset *cpus, char **);
/* The caches' reports kept: one for all the known CPUs of a cache that
 * report it alike (level, type, id, size, CPUs), one for each other. */
int	 topology_cache_records(const struct topology *);
int	 topology_add_node(struct topology *, int id, const struct cpuset *cpus,
	     uint64_t memory, const int *distance, int ndistance, char **);
void	 topology_set_isolated(struct topology *, const struct cpuset *);
int	 topology_finish(struct topology *, char **);

/* Whole-machine views. */
const struct cpuset	*topology_online(const struct topology *);
const struct cpuset	*topology_isolated(const struct topology *);
int			 topology_ncores(const struct topology *);
int			 topology_threads_per_core(const struct topology *);
int			 topology_hybrid(const struct topology *);
/* Online CPUs of a core kind (CORE_KIND_UNKNOWN: not a hybrid core). */
const struct cpuset	*topology_kind_cpus(const struct topology *,
			     enum core_kind);
/* Online CPUs of a priority; CPU_PRIO_NONE gives all online CPUs. */
const struct cpuset	*topology_prio_cpus(const struct topology *,
			     enum cpu_prio);

/* Elements by index (ascending id) and by id; NULL (index -1) when absent.
 * topology_cpu() takes a CPU id and also knows offline CPUs (online 0,
 * core and cluster -1); derived sets hold online CPUs only. */
int			 topology_npackages(const struct topology *);
const struct topo_package *topology_package(const struct topology *, int);
const struct topo_package *topology_package_by_id(const struct topology *,
			     int);
int			 topology_nnodes(const struct topology *);
const struct topo_node	*topology_node(const struct topology *, int);
const struct topo_node	*topology_node_by_id(const struct topology *, int);
int			 topology_node_index(const struct topology *, int);
/* Distance between two node ids, -1 when either is unknown. */
int			 topology_node_distance(const struct topology *, int,
			     int);
int			 topology_ncaches(const struct topology *);
const struct topo_cache	*topology_cache(const struct topology *, int);
const struct topo_core	*topology_core(const struct topology *, int);
const struct topo_cpu	*topology_cpu(const struct topology *, int);

/*
 * Override hooks for tests and simulations, used after topology_finish():
 * force the priority of some CPUs (CPU_PRIO_NONE drops the forcing), set
 * the cluster_id of some CPUs (-1: none; an unknown CPU is -ENOENT) or
 * their core kind, and re-derive what depends on it (priority sets,
 * clusters, hybrid). The overrides are kept across topology_finish().
 */
void	 topology_set_prio(struct topology *, const struct cpuset *,
	     enum cpu_prio);
int	 topology_set_cluster(struct topology *, const struct cpuset *,
	     int cluster, char **);
void	 topology_set_kind(struct topology *, const struct cpuset *,
	     enum core_kind);

#endif
