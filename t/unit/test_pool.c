/*
 * test_pool.c: the pool tree of anchor §1.1 (shape, names, post-order ids,
 * depth) and the static supply and memory of §1.2 on the recorded
 * machines and a synthetic one, and the deepest pool for a CPU set (§1.3).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "memzone.h"
#include "pool.h"
#include "testlib.h"

struct fixture {
	struct topology		*topo;
	struct pool_tree	*tree;
};

/* A tree with allowed = all online CPUs and the given reserved set. */
static void
build(struct fixture *f, struct topology *t, const char *reserved)
{
	struct cpuset	*res = testlib_set(reserved);
	char		*cause = NULL;

	f->topo = t;
	cr_assert_eq(pool_tree_new(t, topology_online(t), res, &f->tree,
	    &cause), 0, "%s", cause ? cause : "");
	cpuset_free(res);
}

static void
done(struct fixture *f)
{
	pool_tree_free(f->tree);
	topology_free(f->topo);
}

static struct pool *
named(struct fixture *f, const char *name)
{
	struct pool	*p = pool_tree_find(f->tree, name);

	cr_assert_not_null(p, "no pool \"%s\"", name);
	return (p);
}

/* Every CPU id of [lo, hi] with id % step == rem, in list form. */
static char *
stride(int lo, int hi, int step, int rem)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	char		*out;
	int		 i;

	for (i = lo; i <= hi; i++)
		if (i % step == rem)
			cpuset_add(&s, i);
	out = cpuset_format(&s);
	cpuset_clear(&s);
	return (out);
}

Test(pool, desktop_is_one_socket)
{
	struct fixture	 f;
	struct pool	*root;

	build(&f, testlib_machine("desktop"), "0");
	cr_assert_eq(pool_tree_count(f.tree), 1);
	root = pool_tree_root(f.tree);
	cr_assert_str_eq(root->name, "socket #0");
	cr_assert_eq(root->kind, POOL_SOCKET);
	cr_assert_null(root->parent);
	cr_assert_eq(root->id, 0);
	cr_assert_eq(root->depth, 0);
	testlib_assert_set(&root->cpus, "0-19");
	testlib_assert_set(&root->reserved, "0");
	testlib_assert_set(&root->sharable, "1-19");
	testlib_assert_set(&root->isolated, "");
	testlib_assert_set(&root->mems, "0");
	done(&f);
}

Test(pool, server_tree_in_post_order)
{
	static const char *order[] = { "NUMA node #0", "NUMA node #2",
	    "socket #0", "NUMA node #1", "NUMA node #3", "socket #1", "root" };
	struct fixture	 f;
	struct pool	*p;
	int		 i;

	build(&f, testlib_machine("server"), "3,11");
	cr_assert_eq(pool_tree_count(f.tree), 7);
	for (i = 0; i < 7; i++) {
		p = pool_tree_get(f.tree, i);
		cr_assert_str_eq(p->name, order[i], "pool %d is %s", i, p->name);
		cr_assert_eq(p->id, i);
	}
	cr_assert_eq(pool_tree_depth(f.tree), 2);
	p = pool_tree_root(f.tree);
	cr_assert_eq(p->kind, POOL_VIRTUAL);
	cr_assert_eq(p->nchildren, 2);
	cr_assert_eq(cpuset_count(&p->cpus), 112);
	cr_assert_eq(named(&f, "NUMA node #2")->parent, named(&f, "socket #0"));
	cr_assert_eq(named(&f, "NUMA node #3")->parent, named(&f, "socket #1"));
	cr_assert_eq(named(&f, "NUMA node #3")->depth, 2);
	cr_assert_eq(named(&f, "NUMA node #3")->kind, POOL_NUMA);
	cr_assert(pool_is_ancestor(p, named(&f, "NUMA node #1")));
	cr_assert(!pool_is_ancestor(named(&f, "socket #0"),
	    named(&f, "NUMA node #1")));
	done(&f);
}

Test(pool, server_supply)
{
	struct fixture	 f;
	struct pool	*n0, *n3, *s1, *root;
	char		*want;
	int		 i;

	build(&f, testlib_machine("server"), "3,11");
	/* Node k holds the CPUs congruent to k mod 4, 28 each. */
	for (i = 0; i < 4; i++) {
		char	name[32];

		snprintf(name, sizeof name, "NUMA node #%d", i);
		want = stride(0, 111, 4, i);
		testlib_assert_set(&named(&f, name)->cpus, want);
		free(want);
	}
	n0 = named(&f, "NUMA node #0");
	testlib_assert_set(&n0->isolated, "4,60");
	testlib_assert_set(&n0->reserved, "");
	cr_assert_eq(cpuset_count(&n0->sharable), 26);
	cr_assert(!cpuset_has(&n0->sharable, 4));
	n3 = named(&f, "NUMA node #3");
	testlib_assert_set(&n3->isolated, "7,63");
	testlib_assert_set(&n3->reserved, "3,11");
	cr_assert_eq(cpuset_count(&n3->sharable), 24);
	s1 = named(&f, "socket #1");
	testlib_assert_set(&s1->isolated, "5,7,61,63");
	testlib_assert_set(&s1->reserved, "3,11");
	want = stride(0, 111, 2, 1);
	testlib_assert_set(&s1->cpus, want);
	free(want);
	root = pool_tree_root(f.tree);
	testlib_assert_set(&root->isolated, "4-7,60-63");
	cr_assert_eq(cpuset_count(&root->sharable), 112 - 8 - 2);
	done(&f);
}

Test(pool, server_memory)
{
	struct fixture	 f;
	struct pool	*n0, *n2, *n1, *root;

	build(&f, testlib_machine("server"), "0");
	/* The PMEM nodes 4 and 5 are nearest to nodes 0 and 2. */
	n0 = named(&f, "NUMA node #0");
	testlib_assert_set(&n0->mems, "0,4");
	testlib_assert_set(&n0->mems_type[MEM_TYPE_DRAM], "0");
	testlib_assert_set(&n0->mems_type[MEM_TYPE_PMEM], "4");
	n2 = named(&f, "NUMA node #2");
	testlib_assert_set(&n2->mems, "2,5");
	n1 = named(&f, "NUMA node #1");
	testlib_assert_set(&n1->mems, "1");
	testlib_assert_set(&named(&f, "socket #0")->mems, "0,2,4-5");
	testlib_assert_set(&named(&f, "socket #1")->mems, "1,3");
	root = pool_tree_root(f.tree);
	testlib_assert_set(&root->mems, "0-5");
	testlib_assert_set(&root->mems_type[MEM_TYPE_DRAM], "0-3");
	testlib_assert_set(&root->mems_type[MEM_TYPE_PMEM], "4-5");
	done(&f);
}

#define DRAM		(1u << MEM_TYPE_DRAM)
#define PMEM		(1u << MEM_TYPE_PMEM)
#define HBM		(1u << MEM_TYPE_HBM)

static void
assert_offer(struct fixture *f, const char *pool, unsigned types,
    const char *want)
{
	struct cpuset	zone = CPUSET_INITIALIZER;
	char		*got;

	memzone_offer(f->topo, named(f, pool), types, &zone);
	got = cpuset_format(&zone);
	cr_assert_str_eq(got, want, "%s, types %#x: offers %s, not %s", pool,
	    types, got, want);
	free(got);
	cpuset_clear(&zone);
}

/*
 * The memory offers of the Go policy's pool scoring on server: PMEM node 4
 * is 17 from node 0 and 28 from the others, node 5 likewise from node 2.
 * A pool without PMEM is widened by the PMEM nodes nearest any of its own:
 * for nodes 1 and 3 both are at 28, so both come.
 */
Test(pool, server_memory_offers)
{
	struct fixture	 f;
	struct cpuset	*s;

	build(&f, testlib_machine("server"), "3,11");
	assert_offer(&f, "NUMA node #0", DRAM | PMEM, "0,4");
	assert_offer(&f, "NUMA node #2", DRAM | PMEM, "2,5");
	assert_offer(&f, "NUMA node #1", DRAM | PMEM, "1,4-5");
	assert_offer(&f, "NUMA node #3", DRAM | PMEM, "3-5");
	assert_offer(&f, "socket #1", DRAM | PMEM, "1,3-5");
	assert_offer(&f, "socket #0", DRAM | PMEM, "0,2,4-5");
	assert_offer(&f, "root", DRAM | PMEM, "0-5");
	/* Only the wanted types stay; 0 is all the pool has. */
	assert_offer(&f, "NUMA node #0", DRAM, "0");
	/* Nothing to widen from: a failed offer, as libmem's. */
	assert_offer(&f, "NUMA node #1", PMEM, "");
	assert_offer(&f, "NUMA node #0", PMEM, "4");
	assert_offer(&f, "NUMA node #0", 0, "0,4");
	assert_offer(&f, "NUMA node #1", 0, "1");
	/* A type the machine lacks widens nothing. */
	assert_offer(&f, "NUMA node #1", DRAM | HBM, "1");
	s = testlib_set("4");
	cr_assert_eq(memzone_types(f.topo, s), PMEM);
	cpuset_free(s);
	s = testlib_set("0-5");
	cr_assert_eq(memzone_types(f.topo, s), DRAM | PMEM);
	cpuset_free(s);
	done(&f);
}

/* HBM nodes (smaller than the DRAM ones) are offered only when asked:
 * memory-only node k sits 17 from CPU node k. */
Test(pool, hbm_offered_when_asked)
{
	struct fixture	 f;
	char		*dir;

	dir = testlib_mksysfs("packages=2,nodes=2,cores=2,threads=2,mem=4G,"
	    "memnodes=4,memnodesize=1G");
	build(&f, testlib_topology(dir), "0");
	free(dir);
	assert_offer(&f, "NUMA node #1", HBM, "5");
	assert_offer(&f, "NUMA node #1", DRAM | HBM, "1,5");
	assert_offer(&f, "NUMA node #1", DRAM, "1");
	/* The socket's own HBM nodes are its nodes' nearest. */
	assert_offer(&f, "socket #1", DRAM | HBM, "2-3,6-7");
	done(&f);
}

Test(pool, four_sockets_without_numa_pools)
{
	struct fixture	 f;
	struct pool	*root, *s;
	int		 i;

	build(&f, testlib_machine("4-socket-server-nosnc"), "0");
	cr_assert_eq(pool_tree_count(f.tree), 5);
	root = pool_tree_root(f.tree);
	cr_assert_str_eq(root->name, "root");
	cr_assert_eq(root->id, 4);
	cr_assert_eq(root->nchildren, 4);
	for (i = 0; i < 4; i++) {
		s = root->children[i];
		cr_assert_eq(s->id, i);
		cr_assert_eq(s->kind, POOL_SOCKET);
		cr_assert_eq(s->nchildren, 0);
		/* Package k: CPUs 18k..18k+17 and their siblings 72 above. */
		cr_assert_eq(cpuset_count(&s->cpus), 36);
		cr_assert(cpuset_has(&s->cpus, 18 * i));
		cr_assert(cpuset_has(&s->cpus, 72 + 18 * i + 17));
		cr_assert_eq(cpuset_first(&s->mems), i);
		cr_assert_eq(cpuset_count(&s->mems), 1);
	}
	testlib_assert_set(&root->children[0]->reserved, "0");
	done(&f);
}

Test(pool, allowed_limits_supply)
{
	struct fixture	 f;
	struct cpuset	*allowed = testlib_set("0-7,56-63");
	struct cpuset	*res = testlib_set("0");
	struct pool	*n0, *n1;
	char		*cause = NULL;

	f.topo = testlib_machine("server");
	cr_assert_eq(pool_tree_new(f.topo, allowed, res, &f.tree, &cause), 0);
	n0 = named(&f, "NUMA node #0");
	testlib_assert_set(&n0->cpus, "0,4,8,12,16,20,24,28,32,36,40,44,48,"
	    "52,56,60,64,68,72,76,80,84,88,92,96,100,104,108");
	testlib_assert_set(&n0->reserved, "0");
	testlib_assert_set(&n0->isolated, "4,60");
	testlib_assert_set(&n0->sharable, "56");
	n1 = named(&f, "NUMA node #1");
	testlib_assert_set(&n1->sharable, "1,57");
	testlib_assert_set(pool_tree_allowed(f.tree), "0-7,56-63");
	cpuset_free(allowed);
	cpuset_free(res);
	done(&f);
}

Test(pool, deepest_pool_for_cpus)
{
	struct fixture	 f;
	struct cpuset	*s;

	build(&f, testlib_machine("server"), "3,11");
	s = testlib_set("1,57");
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "NUMA node #1");
	cpuset_free(s);
	/* Nodes 0 and 2 share socket #0. */
	s = testlib_set("0,2");
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "socket #0");
	cpuset_free(s);
	s = testlib_set("0-1");
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "root");
	cpuset_free(s);
	/* Isolated CPUs are grantable, reserved ones are not. */
	s = testlib_set("7,63");
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "NUMA node #3");
	cpuset_free(s);
	s = testlib_set("3,7");
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "root");
	cpuset_free(s);
	s = cpuset_new();
	cr_assert_str_eq(pool_tree_for_cpus(f.tree, s)->name, "root");
	cpuset_free(s);
	done(&f);
}

Test(pool, n4c16)
{
	struct fixture	 f;
	char		*root = testlib_mksysfs("packages=2,nodes=2,cores=2,"
			    "threads=2,numbering=adjacent,mem=2G");
	struct pool	*p;

	build(&f, testlib_topology(root), "15");
	cr_assert_eq(pool_tree_count(f.tree), 7);
	/* Derived in anchor §1.1: NUMA#0=0, NUMA#1=1, socket#0=2, ... */
	cr_assert_str_eq(pool_tree_get(f.tree, 0)->name, "NUMA node #0");
	cr_assert_str_eq(pool_tree_get(f.tree, 1)->name, "NUMA node #1");
	cr_assert_str_eq(pool_tree_get(f.tree, 2)->name, "socket #0");
	cr_assert_str_eq(pool_tree_get(f.tree, 3)->name, "NUMA node #2");
	cr_assert_str_eq(pool_tree_get(f.tree, 4)->name, "NUMA node #3");
	cr_assert_str_eq(pool_tree_get(f.tree, 5)->name, "socket #1");
	cr_assert_str_eq(pool_tree_get(f.tree, 6)->name, "root");
	p = named(&f, "NUMA node #3");
	testlib_assert_set(&p->cpus, "12-15");
	testlib_assert_set(&p->sharable, "12-14");
	testlib_assert_set(&p->reserved, "15");
	testlib_assert_set(&named(&f, "socket #0")->cpus, "0-7");
	free(root);
	done(&f);
}
