/*
 * topology.c owns the pure topology model. The builders only record what
 * discovery or a test says about CPUs, caches and NUMA nodes; finishing
 * checks those inputs against each other and derives everything else
 * (cores, packages and dies, logical clusters, deduplicated caches, node
 * memory types, CPU priorities). Inputs are kept, so a topology can be
 * finished again after more builder calls and re-derives from scratch.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "xmalloc.h"

/* The kernel's defaults when the firmware gives no distance table. */
#define TOPO_LOCAL_DISTANCE	10
#define TOPO_REMOTE_DISTANCE	20

/* Energy performance preferences the cpufreq drivers know, best first. */
static const char *topo_epps[] = {
	"performance", "balance_performance", "balance_power", "power"
};
#define TOPO_EPP_UNKNOWN	4

struct cpu_in {
	struct topo_cpu_info	 info;		/* epp owned, threads unused */
	int			 forced;	/* by topology_set_prio, or -1 */
	enum cpu_prio		 found;		/* priority from cpufreq */
};

struct sibling_in {
	int			 cpu;
	int			 sibling;
};

struct cache_in {
	int			 cpu;
	int			 level;
	char			 type;
	int			 id;
	uint64_t		 size;
	struct cpuset		 cpus;
	int			 index;		/* of the derived cache */
};

struct node_in {
	int			 id;
	struct cpuset		 cpus;
	uint64_t		 memory;
	int			*distance;
	int			 ndistance;
};

struct topology {
	/* What the builders were told. */
	struct cpu_in		*in_cpus;
	int			 nin_cpus;
	/* Thread siblings named before they were added: a finish refuses
	 * those still unknown. The others need no keeping (a CPU is never
	 * taken back). */
	struct sibling_in	*in_siblings;
	int			 nin_siblings;
	struct cpuset		 in_cpu_ids;
	struct cache_in		*in_caches;
	int			 nin_caches;
	int			*in_cache_slots;	/* index + 1, 0 free */
	int			 nin_cache_slots;	/* power of two */
	struct node_in		*in_nodes;
	int			 nin_nodes;
	struct cpuset		 in_node_ids;
	struct cpuset		 in_isolated;

	/* Derived by topology_finish(); cpus[i] describes in_cpus[i]. */
	int			 finished;
	struct topo_cpu		*cpus;
	int			 ncpus;
	int			*byid;		/* CPU id -> index, or -1 */
	int			 nbyid;
	struct cpuset		 online;
	struct cpuset		 isolated;
	struct cpuset		 prio[CPU_PRIO_COUNT];
	struct cpuset		 kinds[3];	/* online CPUs by core_kind */
	struct topo_core	*cores;
	int			 ncores;
	int			 threads_per_core;
	int			 hybrid;
	struct topo_package	*packages;
	int			 npackages;
	struct topo_cache	*caches;
	int			 ncaches;
	struct topo_node	*nodes;
	int			 nnodes;
};

struct topology *
topology_new(void)
{
	struct topology	*t;

	t = xcalloc(1, sizeof *t);
	return (t);
}

static void
topology_clear_clusters(struct topology *t)
{
	struct topo_package	*pkg;
	struct topo_die		*die;
	int			 i, j, k;

	for (i = 0; i < t->npackages; i++) {
		pkg = &t->packages[i];
		for (j = 0; j < pkg->ndies; j++) {
			die = &pkg->dies[j];
			for (k = 0; k < die->nclusters; k++)
				cpuset_clear(&die->clusters[k].cpus);
			free(die->clusters);
			die->clusters = NULL;
			die->nclusters = 0;
		}
	}
}

static void
topology_clear(struct topology *t)
{
	struct topo_package	*pkg;
	int			 i, j;

	topology_clear_clusters(t);
	for (i = 0; i < t->npackages; i++) {
		pkg = &t->packages[i];
		for (j = 0; j < pkg->ndies; j++) {
			cpuset_clear(&pkg->dies[j].cpus);
			cpuset_clear(&pkg->dies[j].nodes);
		}
		free(pkg->dies);
		cpuset_clear(&pkg->cpus);
		cpuset_clear(&pkg->nodes);
	}
	free(t->packages);
	for (i = 0; i < t->ncpus; i++)
		free(t->cpus[i].caches);
	free(t->cpus);
	free(t->byid);
	for (i = 0; i < t->ncores; i++)
		cpuset_clear(&t->cores[i].threads);
	free(t->cores);
	/* Their sets are the reports' (topology_derive_caches). */
	free(t->caches);
	for (i = 0; i < t->nnodes; i++) {
		cpuset_clear(&t->nodes[i].cpus);
		free(t->nodes[i].distance);
	}
	free(t->nodes);
	cpuset_clear(&t->online);
	cpuset_clear(&t->isolated);
	for (i = 0; i < CPU_PRIO_COUNT; i++)
		cpuset_clear(&t->prio[i]);
	for (i = 0; i < 3; i++)
		cpuset_clear(&t->kinds[i]);

	t->finished = 0;
	t->cpus = NULL;
	t->ncpus = 0;
	t->byid = NULL;
	t->nbyid = 0;
	t->cores = NULL;
	t->ncores = 0;
	t->threads_per_core = 0;
	t->hybrid = 0;
	t->packages = NULL;
	t->npackages = 0;
	t->caches = NULL;
	t->ncaches = 0;
	t->nodes = NULL;
	t->nnodes = 0;
}

void
topology_free(struct topology *t)
{
	int	i;

	if (t == NULL)
		return;
	topology_clear(t);
	for (i = 0; i < t->nin_cpus; i++)
		free((char *)t->in_cpus[i].info.epp);
	free(t->in_cpus);
	free(t->in_siblings);
	for (i = 0; i < t->nin_caches; i++)
		cpuset_clear(&t->in_caches[i].cpus);
	free(t->in_caches);
	free(t->in_cache_slots);
	for (i = 0; i < t->nin_nodes; i++) {
		cpuset_clear(&t->in_nodes[i].cpus);
		free(t->in_nodes[i].distance);
	}
	free(t->in_nodes);
	cpuset_clear(&t->in_cpu_ids);
	cpuset_clear(&t->in_node_ids);
	cpuset_clear(&t->in_isolated);
	free(t);
}

int
topology_add_cpu(struct topology *t, const struct topo_cpu_info *info,
    char **cause)
{
	struct cpu_in	*c;
	int		 id;

	if (info->id < 0 || info->id > CPUSET_MAX_ID) {
		xasprintf(cause, "cpu %d: id outside 0-%d", info->id,
		    CPUSET_MAX_ID);
		return (-ERANGE);
	}
	if (cpuset_has(&t->in_cpu_ids, info->id)) {
		xasprintf(cause, "cpu %d: described twice", info->id);
		return (-EEXIST);
	}
	t->in_cpus = xreallocarray(t->in_cpus, t->nin_cpus + 1,
	    sizeof *t->in_cpus);
	c = &t->in_cpus[t->nin_cpus++];
	memset(c, 0, sizeof *c);
	c->info = *info;
	c->info.epp = info->epp != NULL ? xstrdup(info->epp) : NULL;
	c->info.threads = NULL;
	/* Its siblings are all that is checked of them: only those not yet
	 * known are kept (a copy of every CPU's set was 4 MiB on the
	 * 4,096-CPU machine). */
	if (info->threads != NULL)
		CPUSET_FOREACH(id, info->threads) {
			if (id == info->id || cpuset_has(&t->in_cpu_ids, id))
				continue;
			t->in_siblings = xreallocarray(t->in_siblings,
			    (size_t)t->nin_siblings + 1, sizeof *t->in_siblings);
			t->in_siblings[t->nin_siblings].cpu = info->id;
			t->in_siblings[t->nin_siblings++].sibling = id;
		}
	c->forced = -1;
	c->found = CPU_PRIO_NORMAL;
	cpuset_add(&t->in_cpu_ids, info->id);
	return (0);
}

static uint64_t
cache_in_hash(int level, char type, int id, uint64_t size,
    const struct cpuset *cpus)
{
	uint64_t	h = cpuset_hash(cpus);

	h ^= ((uint64_t)(unsigned)level << 40 | (uint64_t)(unsigned char)type
	    << 32 | (unsigned)id) * 0x9e3779b97f4a7c15ULL;
	return ((h ^ size * 0xff51afd7ed558ccdULL) * 0xc4ceb9fe1a85ec53ULL);
}

/* The slot of the record of this cache as one CPU saw it, or the free
 * slot where it goes. */
static int *
cache_in_slot(const struct topology *t, int level, char type, int id,
    uint64_t size, const struct cpuset *cpus)
{
	const struct cache_in	*k;
	size_t			 mask = (size_t)t->nin_cache_slots - 1, i;

	i = cache_in_hash(level, type, id, size, cpus) & mask;
	for (; t->in_cache_slots[i] != 0; i = (i + 1) & mask) {
		k = &t->in_caches[t->in_cache_slots[i] - 1];
		if (k->level == level && k->type == type && k->id == id &&
		    k->size == size && cpuset_equal(&k->cpus, cpus))
			break;
	}
	return (&t->in_cache_slots[i]);
}

static void
cache_in_slots_grow(struct topology *t)
{
	const struct cache_in	*k;
	int			 i;

	free(t->in_cache_slots);
	t->nin_cache_slots = t->nin_cache_slots ? 2 * t->nin_cache_slots : 64;
	t->in_cache_slots = xcalloc((size_t)t->nin_cache_slots,
	    sizeof *t->in_cache_slots);
	for (i = 0; i < t->nin_caches; i++) {
		k = &t->in_caches[i];
		*cache_in_slot(t, k->level, k->type, k->id, k->size,
		    &k->cpus) = i + 1;
	}
}

int
topology_add_cache(struct topology *t, int cpu, int level, char type, int id,
    uint64_t size, const struct cpuset *cpus, char **cause)
{
	struct cache_in	*c;
	int		*slot = NULL;

	if (level < 1) {
		xasprintf(cause, "cpu %d: cache level %d", cpu, level);
		return (-EINVAL);
	}
	if (type != 'D' && type != 'I' && type != 'U') {
		xasprintf(cause, "cpu %d: L%d cache of unknown type '%c'", cpu,
		    level, type);
		return (-EINVAL);
	}
	/*
	 * A cache every CPU sharing it reports: one record holds it when
	 * only the reporter differs, the reporter being a known CPU among
	 * the cache's (the cache's CPUs already name it). The synthetic
	 * 4,096-CPU machine's 16,384 reports, a set of 1 KiB each, are
	 * kept as 6,146: three caches a core and two L3s.
	 */
	if (cpus != NULL) {
		if (2 * (t->nin_caches + 1) > t->nin_cache_slots)
			cache_in_slots_grow(t);
		slot = cache_in_slot(t, level, type, id, size, cpus);
		if (*slot != 0 && cpuset_has(cpus, cpu) &&
		    cpuset_has(&t->in_cpu_ids, cpu))
			return (0);
		if (*slot != 0)
			slot = NULL;	/* kept by the first */
	}
	t->in_caches = xreallocarray(t->in_caches, t->nin_caches + 1,
	    sizeof *t->in_caches);
	c = &t->in_caches[t->nin_caches++];
	c->cpu = cpu;
	c->level = level;
	c->type = type;
	c->id = id;
	c->size = size;
	c->index = -1;
	cpuset_init(&c->cpus);
	if (cpus != NULL) {
		cpuset_copy(&c->cpus, cpus);
		cpuset_trim(&c->cpus);
	}
	if (slot != NULL)
		*slot = t->nin_caches;
	return (0);
}

int
topology_add_node(struct topology *t, int id, const struct cpuset *cpus,
    uint64_t memory, const int *distance, int ndistance, char **cause)
{
	struct node_in	*n;

	if (id < 0 || id > CPUSET_MAX_ID) {
		xasprintf(cause, "node %d: id outside 0-%d", id, CPUSET_MAX_ID);
		return (-ERANGE);
	}
	if (cpuset_has(&t->in_node_ids, id)) {
		xasprintf(cause, "node %d: described twice", id);
		return (-EEXIST);
	}
	if (ndistance < 0 || (ndistance > 0 && distance == NULL)) {
		xasprintf(cause, "node %d: bad distance row", id);
		return (-EINVAL);
	}
	t->in_nodes = xreallocarray(t->in_nodes, t->nin_nodes + 1,
	    sizeof *t->in_nodes);
	n = &t->in_nodes[t->nin_nodes++];
	n->id = id;
	cpuset_init(&n->cpus);
	if (cpus != NULL)
		cpuset_copy(&n->cpus, cpus);
	n->memory = memory;
	n->ndistance = ndistance;
	n->distance = NULL;
	if (ndistance > 0) {
		n->distance = xreallocarray(NULL, ndistance, sizeof *distance);
		memcpy(n->distance, distance, ndistance * sizeof *distance);
	}
	cpuset_add(&t->in_node_ids, id);
	return (0);
}

void
topology_set_isolated(struct topology *t, const struct cpuset *cpus)
{
	if (cpus == NULL)
		cpuset_zero(&t->in_isolated);
	else
		cpuset_copy(&t->in_isolated, cpus);
}

static int
cmp_cpu_in_id(const void *a, const void *b)
{
	const struct cpu_in	*x = a, *y = b;

	return ((x->info.id > y->info.id) - (x->info.id < y->info.id));
}

static int
cmp_node_in_id(const void *a, const void *b)
{
	const struct node_in	*x = a, *y = b;

	return ((x->id > y->id) - (x->id < y->id));
}

#define CMP_FIELD(x, y, f) do {						\
	if ((x)->f != (y)->f)						\
		return ((x)->f < (y)->f ? -1 : 1);			\
} while (0)

/* Cores: same package and core_id, threads by id. */
static int
cmp_cpu_core(const void *a, const void *b)
{
	const struct topo_cpu	*x = *(struct topo_cpu * const *)a;
	const struct topo_cpu	*y = *(struct topo_cpu * const *)b;

	CMP_FIELD(x, y, package);
	CMP_FIELD(x, y, core);	/* still the sysfs core_id here */
	CMP_FIELD(x, y, id);
	return (0);
}

static int
cmp_cpu_die(const void *a, const void *b)
{
	const struct topo_cpu	*x = *(struct topo_cpu * const *)a;
	const struct topo_cpu	*y = *(struct topo_cpu * const *)b;

	CMP_FIELD(x, y, package);
	CMP_FIELD(x, y, die);
	CMP_FIELD(x, y, id);
	return (0);
}

static int
cmp_core_first(const void *a, const void *b)
{
	const struct topo_core	*x = a, *y = b;
	int			 fx, fy;

	fx = cpuset_first(&x->threads);
	fy = cpuset_first(&y->threads);
	return ((fx > fy) - (fx < fy));
}

static int
cmp_cache(const void *a, const void *b)
{
	const struct cache_in	*x = *(struct cache_in * const *)a;
	const struct cache_in	*y = *(struct cache_in * const *)b;
	int			 fx, fy;

	CMP_FIELD(x, y, level);
	CMP_FIELD(x, y, type);
	fx = cpuset_first(&x->cpus);
	fy = cpuset_first(&y->cpus);
	if (fx != fy)
		return (fx < fy ? -1 : 1);
	return (cpuset_cmp(&x->cpus, &y->cpus));
}

struct cluster_tmp {
	int		 id;
	struct cpuset	 cpus;
};

static int
cmp_cluster_tmp(const void *a, const void *b)
{
	const struct cluster_tmp	*x = a, *y = b;

	CMP_FIELD(x, y, id);
	return (0);
}

static int
cmp_cpu_cluster(const void *a, const void *b)
{
	const struct cpu_in	*x = *(struct cpu_in * const *)a;
	const struct cpu_in	*y = *(struct cpu_in * const *)b;

	CMP_FIELD(x, y, info.cluster);
	CMP_FIELD(x, y, info.id);
	return (0);
}

static struct topo_cpu *
cpu_by_id(const struct topology *t, int id)
{
	if (id < 0 || id >= t->nbyid || t->byid[id] < 0)
		return (NULL);
	return (&t->cpus[t->byid[id]]);
}

/* Checks what no single builder call could check alone. */
static int
topology_check(struct topology *t, char **cause)
{
	struct cpu_in	*c;
	struct cache_in	*k;
	struct node_in	*n;
	int		 i;

	for (i = 0; i < t->nin_siblings; i++)
		if (!cpuset_has(&t->in_cpu_ids, t->in_siblings[i].sibling)) {
			xasprintf(cause, "cpu %d: thread sibling %d is not a "
			    "known CPU", t->in_siblings[i].cpu,
			    t->in_siblings[i].sibling);
			return (-EINVAL);
		}
	for (i = 0; i < t->nin_cpus; i++) {
		c = &t->in_cpus[i];
		if (!c->info.online)
			continue;
		if (c->info.package < 0 || c->info.die < 0 ||
		    c->info.core < 0) {
			xasprintf(cause, "cpu %d: online without package, die "
			    "and core ids", c->info.id);
			return (-EINVAL);
		}
	}
	for (i = 0; i < t->nin_caches; i++) {
		k = &t->in_caches[i];
		if (!cpuset_has(&t->in_cpu_ids, k->cpu)) {
			xasprintf(cause, "L%d cache of cpu %d: not a known CPU",
			    k->level, k->cpu);
			return (-EINVAL);
		}
	}
	for (i = 0; i < t->nin_nodes; i++) {
		n = &t->in_nodes[i];
		if (n->ndistance != 0 && n->ndistance != t->nin_nodes) {
			xasprintf(cause, "node %d: %d distances for %d nodes",
			    n->id, n->ndistance, t->nin_nodes);
			return (-EINVAL);
		}
	}
	return (0);
}

static void
topology_derive_cpus(struct topology *t)
{
	struct cpu_in	*c;
	struct topo_cpu	*tc;
	int		 i, last;

	qsort(t->in_cpus, t->nin_cpus, sizeof *t->in_cpus, cmp_cpu_in_id);
	t->ncpus = t->nin_cpus;
	t->cpus = xcalloc(t->ncpus > 0 ? t->ncpus : 1, sizeof *t->cpus);
	last = t->ncpus > 0 ? t->in_cpus[t->ncpus - 1].info.id : -1;
	t->nbyid = last + 1;
	t->byid = xreallocarray(NULL, t->nbyid > 0 ? t->nbyid : 1,
	    sizeof *t->byid);
	for (i = 0; i < t->nbyid; i++)
		t->byid[i] = -1;
	for (i = 0; i < t->ncpus; i++) {
		c = &t->in_cpus[i];
		tc = &t->cpus[i];
		tc->id = c->info.id;
		tc->online = c->info.online != 0;
		tc->package = c->info.package;
		tc->die = c->info.die;
		tc->cluster = -1;
		tc->core = -1;
		tc->node = -1;
		tc->kind = c->info.kind;
		tc->prio = CPU_PRIO_NORMAL;
		tc->base_khz = c->info.base_khz;
		t->byid[tc->id] = i;
		if (tc->online)
			cpuset_add(&t->online, tc->id);
	}
	cpuset_copy(&t->isolated, &t->in_isolated);
	cpuset_and(&t->isolated, &t->online);
	for (i = 0; i < t->ncpus; i++)
		t->cpus[i].isolated = cpuset_has(&t->isolated, t->cpus[i].id);
}

/* The online CPUs, as pointers sorted with cmp. */
static struct topo_cpu **
online_sorted(struct topology *t, int (*cmp)(const void *, const void *),
    int *n)
{
	struct topo_cpu	**v;
	int		  i;

	v = xcalloc(t->ncpus > 0 ? t->ncpus : 1, sizeof *v);
	*n = 0;
	for (i = 0; i < t->ncpus; i++)
		if (t->cpus[i].online)
			v[(*n)++] = &t->cpus[i];
	qsort(v, *n, sizeof *v, cmp);
	return (v);
}

static void
topology_derive_cores(struct topology *t)
{
	struct topo_cpu		**v;
	struct topo_core	 *core = NULL;
	int			  i, j, n, id;

	for (i = 0; i < t->ncpus; i++)
		t->cpus[i].core = t->in_cpus[i].info.core;
	v = online_sorted(t, cmp_cpu_core, &n);
	t->cores = xcalloc(n > 0 ? n : 1, sizeof *t->cores);
	for (i = 0; i < n; i++) {
		if (core == NULL || v[i]->package != core->package ||
		    v[i]->core != core->core_id) {
			core = &t->cores[t->ncores++];
			core->package = v[i]->package;
			core->die = v[i]->die;
			core->core_id = v[i]->core;
			cpuset_init(&core->threads);
		}
		cpuset_add(&core->threads, v[i]->id);
	}
	free(v);
	for (i = 0; i < t->ncpus; i++)
		t->cpus[i].core = -1;
	qsort(t->cores, t->ncores, sizeof *t->cores, cmp_core_first);
	for (i = 0; i < t->ncores; i++) {
		core = &t->cores[i];
		core->index = i;
		cpuset_trim(&core->threads);
		/* A core lives in the die of its lowest thread. */
		core->die = cpu_by_id(t, cpuset_first(&core->threads))->die;
		j = cpuset_count(&core->threads);
		if (j > t->threads_per_core)
			t->threads_per_core = j;
		CPUSET_FOREACH(id, &core->threads)
			cpu_by_id(t, id)->core = i;
	}
}

static int
topology_derive_nodes(struct topology *t, char **cause)
{
	struct node_in	*in;
	struct topo_node *node;
	struct topo_cpu	*c;
	int		*has_cpus;
	int		 i, j, id, a, b, ndram;
	uint64_t	 total, avg;

	if (t->nin_nodes == 0) {
		/* No NUMA information: one node holds everything. */
		t->nnodes = 1;
		t->nodes = xcalloc(1, sizeof *t->nodes);
		node = &t->nodes[0];
		node->id = 0;
		cpuset_copy(&node->cpus, &t->online);
		node->distance = xcalloc(1, sizeof *node->distance);
		node->distance[0] = TOPO_LOCAL_DISTANCE;
		node->package = -1;
		for (i = 0; i < t->ncpus; i++) {
			t->cpus[i].node = 0;
			if (t->cpus[i].online && node->package < 0)
				node->package = t->cpus[i].package;
		}
		node->type = MEM_TYPE_DRAM;
		return (0);
	}

	qsort(t->in_nodes, t->nin_nodes, sizeof *t->in_nodes, cmp_node_in_id);
	t->nnodes = t->nin_nodes;
	t->nodes = xcalloc(t->nnodes, sizeof *t->nodes);
	has_cpus = xcalloc(t->nnodes, sizeof *has_cpus);
	for (i = 0; i < t->nnodes; i++) {
		in = &t->in_nodes[i];
		node = &t->nodes[i];
		node->id = in->id;
		node->memory = in->memory;
		node->package = -1;
		cpuset_init(&node->cpus);
		node->distance = xcalloc(t->nnodes, sizeof *node->distance);
		for (j = 0; j < t->nnodes; j++) {
			if (in->ndistance > 0)
				node->distance[j] = in->distance[j];
			else if (i == j)
				node->distance[j] = TOPO_LOCAL_DISTANCE;
			else
				node->distance[j] = TOPO_REMOTE_DISTANCE;
		}
		CPUSET_FOREACH(id, &in->cpus) {
			if ((c = cpu_by_id(t, id)) == NULL)
				continue;
			if (c->node >= 0) {
				xasprintf(cause, "cpu %d: in nodes %d and %d",
				    id, c->node, node->id);
				free(has_cpus);
				return (-EINVAL);
			}
			c->node = node->id;
			has_cpus[i] = 1;
			if (!c->online)
				continue;
			cpuset_add(&node->cpus, id);
			if (node->package < 0)
				node->package = c->package;
		}
	}
	for (i = 0; i < t->ncpus; i++) {
		if (t->cpus[i].online && t->cpus[i].node < 0) {
			xasprintf(cause, "cpu %d: online but in no NUMA node",
			    t->cpus[i].id);
			free(has_cpus);
			return (-EINVAL);
		}
	}

	/* Firmware tables can be asymmetric; the policy needs symmetry. */
	for (i = 0; i < t->nnodes; i++) {
		for (j = i + 1; j < t->nnodes; j++) {
			a = t->nodes[i].distance[j];
			b = t->nodes[j].distance[i];
			if (a != b) {
				t->nodes[i].distance[j] = (a + b) / 2;
				t->nodes[j].distance[i] = (a + b) / 2;
			}
		}
	}

	/*
	 * Nodes with CPUs are DRAM. A CPU-less node with memory is HBM when
	 * it is smaller than the average DRAM node, else PMEM.
	 */
	total = 0;
	ndram = 0;
	for (i = 0; i < t->nnodes; i++) {
		if (has_cpus[i] && t->nodes[i].memory > 0) {
			total += t->nodes[i].memory;
			ndram++;
		}
	}
	avg = ndram > 0 ? total / ndram : 0;
	for (i = 0; i < t->nnodes; i++) {
		node = &t->nodes[i];
		if (has_cpus[i] || node->memory == 0)
			node->type = MEM_TYPE_DRAM;
		else if (node->memory < avg)
			node->type = MEM_TYPE_HBM;
		else
			node->type = MEM_TYPE_PMEM;
	}
	free(has_cpus);
	return (0);
}

static struct topo_die *
package_add_die(struct topo_package *pkg, int id)
{
	struct topo_die	*die;

	pkg->dies = xreallocarray(pkg->dies, pkg->ndies + 1,
	    sizeof *pkg->dies);
	die = &pkg->dies[pkg->ndies++];
	memset(die, 0, sizeof *die);
	die->id = id;
	die->package = pkg->id;
	cpuset_init(&die->cpus);
	cpuset_init(&die->nodes);
	return (die);
}

static void
topology_derive_packages(struct topology *t)
{
	struct topo_cpu		**v;
	struct topo_package	 *pkg = NULL;
	struct topo_die		 *die = NULL;
	int			  i, n;

	v = online_sorted(t, cmp_cpu_die, &n);
	t->packages = xcalloc(n > 0 ? n : 1, sizeof *t->packages);
	for (i = 0; i < n; i++) {
		if (pkg == NULL || v[i]->package != pkg->id) {
			pkg = &t->packages[t->npackages++];
			pkg->id = v[i]->package;
			cpuset_init(&pkg->cpus);
			cpuset_init(&pkg->nodes);
			die = NULL;
		}
		if (die == NULL || v[i]->die != die->id)
			die = package_add_die(pkg, v[i]->die);
		cpuset_add(&pkg->cpus, v[i]->id);
		cpuset_add(&die->cpus, v[i]->id);
		if (v[i]->node >= 0) {
			cpuset_add(&pkg->nodes, v[i]->node);
			cpuset_add(&die->nodes, v[i]->node);
		}
	}
	free(v);
}

/*
 * Logical clusters of one die: CPUs grouped by cluster_id, except that the
 * clusters which are just one core's threads (no real cluster hardware)
 * merge into a single logical cluster named after its lowest CPU's id.
 */
static void
topology_derive_die_clusters(struct topology *t, struct topo_die *die)
{
	struct cpu_in		**v;
	struct cluster_tmp	 *tmp;
	struct topo_cpu		 *c;
	struct cpuset		  group = CPUSET_INITIALIZER;
	struct cpuset		  ht = CPUSET_INITIALIZER;
	int			  i, j, n, ntmp, id, htid;

	v = xcalloc(cpuset_count(&die->cpus) + 1, sizeof *v);
	n = 0;
	CPUSET_FOREACH(id, &die->cpus) {
		i = t->byid[id];
		if (t->in_cpus[i].info.cluster >= 0)
			v[n++] = &t->in_cpus[i];
	}
	qsort(v, n, sizeof *v, cmp_cpu_cluster);

	tmp = xcalloc(n + 1, sizeof *tmp);
	ntmp = 0;
	htid = -1;
	for (i = 0; i < n; i = j) {
		cpuset_zero(&group);
		for (j = i; j < n && v[j]->info.cluster == v[i]->info.cluster;
		    j++)
			cpuset_add(&group, v[j]->info.id);
		c = cpu_by_id(t, v[i]->info.id);
		if (c->core >= 0 &&
		    cpuset_equal(&group, &t->cores[c->core].threads)) {
			if (cpuset_empty(&ht) ||
			    v[i]->info.id < cpuset_first(&ht))
				htid = v[i]->info.cluster;
			cpuset_or(&ht, &group);
			continue;
		}
		tmp[ntmp].id = v[i]->info.cluster;
		cpuset_init(&tmp[ntmp].cpus);
		cpuset_move(&tmp[ntmp].cpus, &group);
		ntmp++;
	}
	if (!cpuset_empty(&ht)) {
		tmp[ntmp].id = htid;
		cpuset_init(&tmp[ntmp].cpus);
		cpuset_move(&tmp[ntmp].cpus, &ht);
		ntmp++;
	}
	qsort(tmp, ntmp, sizeof *tmp, cmp_cluster_tmp);

	die->nclusters = ntmp;
	die->clusters = xcalloc(ntmp + 1, sizeof *die->clusters);
	for (i = 0; i < ntmp; i++) {
		die->clusters[i].index = i;
		die->clusters[i].id = tmp[i].id;
		cpuset_init(&die->clusters[i].cpus);
		cpuset_move(&die->clusters[i].cpus, &tmp[i].cpus);
		die->clusters[i].kind =
		    cpu_by_id(t, cpuset_first(&die->clusters[i].cpus))->kind;
		CPUSET_FOREACH(id, &die->clusters[i].cpus)
			cpu_by_id(t, id)->cluster = i;
		cpuset_clear(&tmp[i].cpus);
	}
	free(tmp);
	free(v);
	cpuset_clear(&group);
	cpuset_clear(&ht);
}

static void
topology_derive_clusters(struct topology *t)
{
	struct topo_package	*pkg;
	int			 i, j;

	topology_clear_clusters(t);
	for (i = 0; i < t->ncpus; i++)
		t->cpus[i].cluster = -1;
	for (i = 0; i < t->npackages; i++) {
		pkg = &t->packages[i];
		for (j = 0; j < pkg->ndies; j++)
			topology_derive_die_clusters(t, &pkg->dies[j]);
	}
}

static void
topology_derive_caches(struct topology *t)
{
	struct cache_in		**v;
	struct cache_in		 *k;
	struct topo_cache	 *cache;
	struct cpuset		 *members;
	struct topo_cpu		 *c;
	int			  i, id;

	v = xcalloc(t->nin_caches + 1, sizeof *v);
	for (i = 0; i < t->nin_caches; i++)
		v[i] = &t->in_caches[i];
	qsort(v, t->nin_caches, sizeof *v, cmp_cache);

	/* Equal neighbours after sorting are one cache seen by many CPUs. */
	t->caches = xcalloc(t->nin_caches + 1, sizeof *t->caches);
	members = xcalloc(t->nin_caches + 1, sizeof *members);
	cache = NULL;
	for (i = 0; i < t->nin_caches; i++) {
		k = v[i];
		if (cache == NULL || cache->level != k->level ||
		    cache->type != k->type ||
		    !cpuset_equal(&cache->cpus, &k->cpus)) {
			cache = &t->caches[t->ncaches++];
			cache->level = k->level;
			cache->type = k->type;
			cache->id = k->id;
			cache->size = k->size;
			/* Borrowed: the report's set, which the topology keeps
			 * as long as what it derives (a copy was 6 MiB on the
			 * 4,096-CPU machine). */
			cache->cpus = k->cpus;
			cpuset_copy(&members[t->ncaches - 1], &k->cpus);
		}
		if (cache->size == 0)
			cache->size = k->size;
		if (cache->id < 0)
			cache->id = k->id;
		cpuset_add(&members[t->ncaches - 1], k->cpu);
		k->index = t->ncaches - 1;
	}

	/* Two passes: count, then fill in index (hence level) order. */
	for (i = 0; i < t->ncaches; i++) {
		CPUSET_FOREACH(id, &members[i])
			if ((c = cpu_by_id(t, id)) != NULL)
				c->ncaches++;
	}
	for (i = 0; i < t->ncpus; i++) {
		c = &t->cpus[i];
		c->caches = xcalloc(c->ncaches + 1, sizeof *c->caches);
		c->ncaches = 0;
	}
	for (i = 0; i < t->ncaches; i++) {
		CPUSET_FOREACH(id, &members[i])
			if ((c = cpu_by_id(t, id)) != NULL)
				c->caches[c->ncaches++] = i;
		cpuset_clear(&members[i]);
	}
	free(members);
	free(v);
}

static int
epp_rank(const char *epp)
{
	size_t	i;

	if (epp == NULL)
		return (TOPO_EPP_UNKNOWN);
	for (i = 0; i < sizeof topo_epps / sizeof topo_epps[0]; i++)
		if (strcmp(epp, topo_epps[i]) == 0)
			return ((int)i);
	return (TOPO_EPP_UNKNOWN);
}

/*
 * Priorities from cpufreq, per package: with more than one base frequency
 * the CPUs above the lowest are HIGH and the rest LOW; E-cores are LOW;
 * with more than one known EPP the other CPUs are HIGH when their EPP is
 * better than the worst seen, else LOW. Forced priorities win.
 */
static void
topology_derive_prio(struct topology *t)
{
	struct topo_package	*pkg;
	struct cpu_in		*in;
	struct topo_cpu		*c;
	unsigned long		 fmin, khz;
	int			 i, p, id, r, rmin, rmax, multif;
	enum cpu_prio		 prio;

	for (i = 0; i < t->ncpus; i++)
		t->in_cpus[i].found = CPU_PRIO_NORMAL;
	for (p = 0; p < t->npackages; p++) {
		pkg = &t->packages[p];
		fmin = 0;
		multif = 0;
		rmin = TOPO_EPP_UNKNOWN;
		rmax = -1;
		CPUSET_FOREACH(id, &pkg->cpus) {
			in = &t->in_cpus[t->byid[id]];
			khz = in->info.base_khz;
			if (khz != 0) {
				if (fmin != 0 && khz != fmin)
					multif = 1;
				if (fmin == 0 || khz < fmin)
					fmin = khz;
			}
			r = epp_rank(in->info.epp);
			if (r != TOPO_EPP_UNKNOWN) {
				if (r < rmin)
					rmin = r;
				if (r > rmax)
					rmax = r;
			}
		}
		CPUSET_FOREACH(id, &pkg->cpus) {
			in = &t->in_cpus[t->byid[id]];
			prio = CPU_PRIO_NORMAL;
			if (multif)
				prio = in->info.base_khz > fmin ?
				    CPU_PRIO_HIGH : CPU_PRIO_LOW;
			if (in->info.kind == CORE_KIND_EFFICIENT)
				prio = CPU_PRIO_LOW;
			else if (rmax > rmin)
				prio = epp_rank(in->info.epp) < rmax ?
				    CPU_PRIO_HIGH : CPU_PRIO_LOW;
			in->found = prio;
		}
	}

	for (p = 0; p < CPU_PRIO_COUNT; p++)
		cpuset_zero(&t->prio[p]);
	for (i = 0; i < t->ncpus; i++) {
		in = &t->in_cpus[i];
		c = &t->cpus[i];
		c->prio = in->forced >= 0 ? (enum cpu_prio)in->forced :
		    in->found;
		if (c->online)
			cpuset_add(&t->prio[c->prio], c->id);
	}
}

static void
topology_derive_kinds(struct topology *t)
{
	int	i, seen[3] = { 0, 0, 0 }, n = 0;

	for (i = 0; i < 3; i++)
		cpuset_zero(&t->kinds[i]);
	for (i = 0; i < t->ncpus; i++) {
		t->cpus[i].kind = t->in_cpus[i].info.kind;
		if (t->cpus[i].online && t->cpus[i].kind <= CORE_KIND_EFFICIENT) {
			seen[t->cpus[i].kind] = 1;
			cpuset_add(&t->kinds[t->cpus[i].kind], t->cpus[i].id);
		}
	}
	for (i = 0; i < 3; i++)
		n += seen[i];
	t->hybrid = n > 1;
}

int
topology_finish(struct topology *t, char **cause)
{
	int	rc;

	topology_clear(t);
	if ((rc = topology_check(t, cause)) != 0)
		return (rc);
	topology_derive_cpus(t);
	if ((rc = topology_derive_nodes(t, cause)) != 0) {
		topology_clear(t);
		return (rc);
	}
	topology_derive_cores(t);
	topology_derive_packages(t);
	topology_derive_kinds(t);
	topology_derive_clusters(t);
	topology_derive_caches(t);
	topology_derive_prio(t);
	t->finished = 1;
	return (0);
}

const struct cpuset *
topology_online(const struct topology *t)
{
	return (&t->online);
}

const struct cpuset *
topology_isolated(const struct topology *t)
{
	return (&t->isolated);
}

int
topology_ncores(const struct topology *t)
{
	return (t->ncores);
}

int
topology_threads_per_core(const struct topology *t)
{
	return (t->threads_per_core);
}

int
topology_hybrid(const struct topology *t)
{
	return (t->hybrid);
}

const struct cpuset *
topology_kind_cpus(const struct topology *t, enum core_kind kind)
{
	if ((int)kind < 0 || kind > CORE_KIND_EFFICIENT)
		kind = CORE_KIND_UNKNOWN;
	return (&t->kinds[kind]);
}

const struct cpuset *
topology_prio_cpus(const struct topology *t, enum cpu_prio prio)
{
	if ((int)prio < 0 || prio >= CPU_PRIO_COUNT)
		return (&t->online);
	return (&t->prio[prio]);
}

int
topology_npackages(const struct topology *t)
{
	return (t->npackages);
}

const struct topo_package *
topology_package(const struct topology *t, int i)
{
	if (i < 0 || i >= t->npackages)
		return (NULL);
	return (&t->packages[i]);
}

const struct topo_package *
topology_package_by_id(const struct topology *t, int id)
{
	int	i;

	for (i = 0; i < t->npackages; i++)
		if (t->packages[i].id == id)
			return (&t->packages[i]);
	return (NULL);
}

int
topology_nnodes(const struct topology *t)
{
	return (t->nnodes);
}

const struct topo_node *
topology_node(const struct topology *t, int i)
{
	if (i < 0 || i >= t->nnodes)
		return (NULL);
	return (&t->nodes[i]);
}

int
topology_node_index(const struct topology *t, int id)
{
	int	lo = 0, hi = t->nnodes - 1, mid;

	while (lo <= hi) {
		mid = lo + (hi - lo) / 2;
		if (t->nodes[mid].id == id)
			return (mid);
		if (t->nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return (-1);
}

const struct topo_node *
topology_node_by_id(const struct topology *t, int id)
{
	return (topology_node(t, topology_node_index(t, id)));
}

int
topology_node_distance(const struct topology *t, int from, int to)
{
	int	i, j;

	i = topology_node_index(t, from);
	j = topology_node_index(t, to);
	if (i < 0 || j < 0)
		return (-1);
	return (t->nodes[i].distance[j]);
}

int
topology_cache_records(const struct topology *t)
{
	return (t->nin_caches);
}

int
topology_ncaches(const struct topology *t)
{
	return (t->ncaches);
}

const struct topo_cache *
topology_cache(const struct topology *t, int i)
{
	if (i < 0 || i >= t->ncaches)
		return (NULL);
	return (&t->caches[i]);
}

const struct topo_core *
topology_core(const struct topology *t, int i)
{
	if (i < 0 || i >= t->ncores)
		return (NULL);
	return (&t->cores[i]);
}

const struct topo_cpu *
topology_cpu(const struct topology *t, int id)
{
	return (cpu_by_id(t, id));
}

void
topology_set_prio(struct topology *t, const struct cpuset *cpus,
    enum cpu_prio prio)
{
	int	i;

	for (i = 0; i < t->nin_cpus; i++) {
		if (!cpuset_has(cpus, t->in_cpus[i].info.id))
			continue;
		if ((int)prio < 0 || prio >= CPU_PRIO_COUNT)
			t->in_cpus[i].forced = -1;
		else
			t->in_cpus[i].forced = prio;
	}
	if (t->finished)
		topology_derive_prio(t);
}

int
topology_set_cluster(struct topology *t, const struct cpuset *cpus,
    int cluster, char **cause)
{
	int	i, id;

	if (cluster < -1) {
		xasprintf(cause, "cluster %d: not an id", cluster);
		return (-EINVAL);
	}
	CPUSET_FOREACH(id, cpus) {
		if (!cpuset_has(&t->in_cpu_ids, id)) {
			xasprintf(cause, "cpu %d: not a known CPU", id);
			return (-ENOENT);
		}
	}
	for (i = 0; i < t->nin_cpus; i++)
		if (cpuset_has(cpus, t->in_cpus[i].info.id))
			t->in_cpus[i].info.cluster = cluster;
	if (t->finished)
		topology_derive_clusters(t);
	return (0);
}

void
topology_set_kind(struct topology *t, const struct cpuset *cpus,
    enum core_kind kind)
{
	int	i;

	for (i = 0; i < t->nin_cpus; i++)
		if (cpuset_has(cpus, t->in_cpus[i].info.id))
			t->in_cpus[i].info.kind = kind;
	if (!t->finished)
		return;
	topology_derive_kinds(t);
	topology_derive_clusters(t);
	topology_derive_prio(t);
}
