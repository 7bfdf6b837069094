/*
 * dradev.c owns the DRA device list: which NUMA nodes we offer, under which
 * names and with how many CPUs, derived from the pool tree's static supply.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dradev.h"
#include "xmalloc.h"

int
dradev_list(const struct pool_tree *pt, struct dradev **out)
{
	const struct topology	*t = pool_tree_topology(pt);
	const struct topo_node	*node;
	struct cpuset		 g = CPUSET_INITIALIZER;
	struct dradev		*devs, *d;
	int			 i, n = 0;

	pool_grantable(pool_tree_root(pt), &g);
	devs = xcalloc((size_t)topology_nnodes(t) + 1, sizeof *devs);
	for (i = 0; i < topology_nnodes(t); i++) {
		node = topology_node(t, i);
		if (!cpuset_intersects(&node->cpus, &g))
			continue;
		d = &devs[n++];
		snprintf(d->name, sizeof d->name, "cpudevnuma%03d", node->id);
		d->node = node->id;
		d->socket = node->package;
		d->smt = topology_threads_per_core(t) > 1;
		cpuset_init(&d->grantable);
		cpuset_copy(&d->grantable, &node->cpus);
		cpuset_and(&d->grantable, &g);
		d->cpus = cpuset_count(&d->grantable);
	}
	cpuset_clear(&g);
	*out = devs;
	return (n);
}

void
dradev_free_list(struct dradev *devs, int n)
{
	int	i;

	if (devs == NULL)
		return;
	for (i = 0; i < n; i++)
		cpuset_clear(&devs[i].grantable);
	free(devs);
}

int
dradev_parse_name(const char *name)
{
	char	buf[DRADEV_NAME_MAX];
	int	id, len;

	if (sscanf(name, "cpudevnuma%d%n", &id, &len) != 1 ||
	    name[len] != '\0' || id < 0 || id > CPUSET_MAX_ID)
		return (-1);
	/* Only the exact spelling we publish: no "+1", " 1", "0001". */
	snprintf(buf, sizeof buf, "cpudevnuma%03d", id);
	if (strcmp(buf, name) != 0)
		return (-1);
	return (id);
}

int
dradev_equal(const struct dradev *a, int na, const struct dradev *b, int nb)
{
	int	i;

	if (na != nb)
		return (0);
	for (i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) != 0 ||
		    a[i].node != b[i].node || a[i].socket != b[i].socket ||
		    a[i].smt != b[i].smt || a[i].cpus != b[i].cpus)
			return (0);
	return (1);
}
