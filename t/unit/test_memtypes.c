/*
 * test_memtypes.c: the memory a container is pinned to and exports, by
 * memory type, on the Go policy's e2e machine n6 (two packages of one
 * DRAM node, an HBM and a PMEM node near each). The cases are the Go
 * suite's topology-aware/n6-hbm-cxl/test01-memory-types, as far as they
 * hold without memory accounting: its first pod (default, dram, hbm, pmem)
 * and the placements of its second (hbm,dram and pmem), before a request
 * overflows a node.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define KEY	"memory-type.resource-policy.nri.io/container."

static struct env	e;

static void
setup(void)
{
	env_open_spec(&e, TESTLIB_N6, "{}");
}

static void
teardown(void)
{
	env_close(&e);
}

TestSuite(memtypes, .init = setup, .fini = teardown);

static int
package_of(const char *id)
{
	return (env_package_of(&e, id));
}

/* A Guaranteed 100m container, annotated value (NULL none), pinned to
 * want: nodes given for package 0, one more for package 1. */
static void
assert_mems(const char *id, const char *value, const char *want0)
{
	struct cpuset	 want = CPUSET_INITIALIZER, got = CPUSET_INITIALIZER;
	char		*ann = NULL, *list;
	int		 pkg, node;

	if (value != NULL)
		xasprintf(&ann, KEY "%s=%s", id, value);
	cr_assert_eq(env_create(&e, id, "G", 100, 100, "default", ann, NULL),
	    0, "%s: %s", id, e.cause ? e.cause : "");
	free(ann);
	pkg = package_of(id);
	cr_assert_eq(cpuset_parse(&want, want0, NULL), 0);
	CPUSET_FOREACH(node, &want)
		cpuset_add(&got, node + pkg);
	list = cpuset_format(&e.fx.self.mems);
	cr_assert(cpuset_equal(&e.fx.self.mems, &got),
	    "%s (%s) on package %d got memory %s", id, value ? value :
	    "default", pkg, list);
	free(list);
	cpuset_clear(&want);
	cpuset_clear(&got);
}

Test(memtypes, go_test01_pod0)
{
	/* Nodes on package 0: dram0 = 0, hbm0 = 2, pmem0 = 4. */
	assert_mems("pod0c0", NULL, "0,4");
	assert_mems("pod0c1", "dram", "0");
	assert_mems("pod0c2", "hbm", "2");
	assert_mems("pod0c3", "pmem", "4");
}

Test(memtypes, go_test01_pod1)
{
	assert_mems("pod1c0", "hbm,dram", "0,2");
	assert_mems("pod1c1", "HBM,DRAM", "0,2");
	assert_mems("pod1c2", "pmem", "4");
	assert_mems("pod1c3", "mixed", "0,2,4");
}

/*
 * That the export of id, on package pkg, says key is the nodes given for
 * package 0 shifted by pkg (NULL: does not say key).
 */
static void
assert_var(const char *id, int pkg, const char *key, const char *nodes0)
{
	struct cpuset	 want = CPUSET_INITIALIZER, got = CPUSET_INITIALIZER;
	char		*text = env_export(&e, id), *line, *list;
	int		 node;

	xasprintf(&line, "%s=", key);
	if (nodes0 == NULL)
		cr_assert_null(strstr(text, line), "%s says %s", id, text);
	else {
		cr_assert_eq(cpuset_parse(&want, nodes0, NULL), 0);
		CPUSET_FOREACH(node, &want)
			cpuset_add(&got, node + pkg);
		list = cpuset_format(&got);
		free(line);
		xasprintf(&line, "%s=%s\n", key, list);
		cr_assert_not_null(strstr(text, line), "%s says %s, not %s",
		    id, text, line);
		free(list);
	}
	free(line);
	free(text);
	cpuset_clear(&want);
	cpuset_clear(&got);
}

/* What is exported: ALL_MEMS and the same split by type. */
Test(memtypes, exports_split_by_type)
{
	int	pkg;

	/* Best effort: shared, in a pool of one package. */
	cr_assert_eq(env_create(&e, "d", "BE", -1, -1, "default", NULL,
	    NULL), 0);
	cr_assert_eq(env_create(&e, "h", "BE", -1, -1, "default",
	    KEY "h=hbm", NULL), 0);
	pkg = package_of("d");
	assert_var("d", pkg, "ALL_MEMS", "0,4");
	assert_var("d", pkg, "DRAM_MEMS", "0");
	assert_var("d", pkg, "PMEM_MEMS", "4");
	assert_var("d", pkg, "HBM_MEMS", NULL);
	/* The default types: its pool's file says it. */
	cr_assert_not_null(policy_export_shared_pool(e.P, "d"));
	/* Its own types: its own file. */
	cr_assert_null(policy_export_shared_pool(e.P, "h"));
	pkg = package_of("h");
	assert_var("h", pkg, "ALL_MEMS", "2");
	assert_var("h", pkg, "HBM_MEMS", "2");
	assert_var("h", pkg, "DRAM_MEMS", NULL);
}

/* A value Go cannot read leaves the default types, and says so. */
Test(memtypes, unknown_types_leave_the_default)
{
	int	i, warned = 0;

	assert_mems("bad", "dram,flash", "0,4");
	for (i = 0; i < e.fx.nwarnings; i++)
		warned += strstr(e.fx.warnings[i], "flash") != NULL;
	cr_assert_eq(warned, 1, "no warning naming the value");
	assert_mems("spaced", "dram, pmem", "0,4");
	assert_mems("empty", "", "0,4");
	cr_assert_eq(e.fx.nwarnings, 0, "an empty value is no mistake");
}

/* Preserved memory: pinned to nothing, exported as its pool's. */
Test(memtypes, preserved_memory_is_left_alone)
{
	cr_assert_eq(env_create(&e, "p", "BE", -1, -1, "default",
	    "memory.preserve.resource-policy.nri.io/container.p=true;"
	    KEY "p=hbm", NULL), 0);
	cr_assert_eq(e.fx.self.pin_mems, 0);
	cr_assert_not_null(policy_export_shared_pool(e.P, "p"));
}
