/*
 * test_invariants.c: the live invariants of topoawarectl check on the
 * recorded server (node k holds the CPUs congruent to k mod 4; CPUs 3 and
 * 11 reserved). A policy built through its operations breaks none; each
 * grant or supply corrupted on purpose through policy_priv.h is named.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants.h"
#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define RESERVED_3_11	"{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"}}"

static struct env		e;
static struct violations	vs;

/* Claim c1 (2 CPUs of node 1) with its pod, exclusive container g1,
 * shared container s1 and pod's container p1 pinned to c1. */
static void
setup(void)
{
	char	kv[128], *list;

	env_open(&e, testlib_machine("server"), RESERVED_3_11);
	violations_init(&vs);
	cr_assert_eq(env_claim_for(&e, "c1", "cpudevnuma001=2", "p1"), 0,
	    "%s", e.cause);
	list = cpuset_format(policy_claim_cpus(e.P, "c1"));
	snprintf(kv, sizeof kv, "DRA_CPUSET_c1=%s", list);
	free(list);
	cr_assert_eq(env_create(&e, "g1", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	cr_assert_eq(env_create(&e, "s1", "BU", 500, 1000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	cr_assert_eq(env_create(&e, "p1", "BE", -1, -1, NULL, NULL, kv), 0,
	    "%s", e.cause);
}

static void
teardown(void)
{
	violations_clear(&vs);
	env_close(&e);
}

TestSuite(invariants, .init = setup, .fini = teardown);

static struct grant *
container(const char *id)
{
	struct grant	*g = strmap_get(e.P->ctrs, id);

	cr_assert_not_null(g, "no container %s", id);
	return (g);
}

static struct grant *
claim(const char *uid)
{
	struct grant	*g = strmap_get(e.P->claims, uid);

	cr_assert_not_null(g, "no claim %s", uid);
	return (g);
}

/* The violation of kind about what whose detail holds part. */
static int
named(const char *kind, const char *what, const char *part)
{
	int	i;

	for (i = 0; i < vs.n; i++)
		if (strcmp(vs.v[i].kind, kind) == 0 &&
		    strcmp(vs.v[i].what, what) == 0 &&
		    (part == NULL || strstr(vs.v[i].detail, part) != NULL))
			return (1);
	return (0);
}

/* Fails, listing what was found, unless the violation is named. */
static void
expect(const char *kind, const char *what, const char *part)
{
	int	i;

	if (named(kind, what, part))
		return;
	for (i = 0; i < vs.n; i++)
		fprintf(stderr, "  %s %s: %s\n", vs.v[i].kind, vs.v[i].what,
		    vs.v[i].detail);
	cr_assert_fail("no %s violation of %s saying \"%s\"", kind, what,
	    part);
}

Test(invariants, a_policy_made_by_its_operations_breaks_none)
{
	cr_assert_eq(container("p1")->kind, GRANT_CLAIM_PINNED);
	cr_assert_eq(cpuset_count(&container("g1")->exclusive), 2);
	cr_assert_eq(invariants_check(e.P, &vs), 0);
	cr_assert_eq(vs.n, 0);
	/* And after a release and a removal. */
	cr_assert_eq(env_remove(&e, "g1"), 0);
	cr_assert_eq(env_release(&e, "c1"), 0);
	cr_assert_eq(invariants_check(e.P, &vs), 0);
}

Test(invariants, a_cpu_granted_twice_is_named_with_both_holders)
{
	struct grant	*g = container("g1");
	int		 cpu = cpuset_first(&claim("c1")->exclusive);
	char		 want[64];

	cpuset_add(&g->exclusive, cpu);
	cr_assert_gt(invariants_check(e.P, &vs), 0);
	snprintf(want, sizeof want, "CPUs %d are held by claim c1 and by "
	    "container g1", cpu);
	expect("cpu-twice", "claim c1", want);
	cpuset_del(&g->exclusive, cpu);
}

Test(invariants, a_grant_outside_its_pool_is_named)
{
	struct grant	*g = claim("c1");

	/* CPU 3 is reserved: in no pool's supply, in no device. */
	cpuset_add(&g->exclusive, 3);
	cr_assert_gt(invariants_check(e.P, &vs), 0);
	expect("outside-pool", "claim c1", "CPUs 3 are not in the supply");
	expect("claim-node", "claim c1", "CPUs 3 are in no NUMA node");
	/* The container pinned to it no longer runs on exactly its CPUs. */
	expect("pinned", "container p1", "its claims hold");
	cpuset_del(&g->exclusive, 3);
}

Test(invariants, a_cpu_held_but_free_is_named)
{
	struct grant	*g = container("g1");
	int		 cpu = cpuset_first(&g->exclusive);
	char		 what[128];

	/* The supply forgets one of g1's CPUs: it looks free. */
	cpuset_add(&e.P->sup[g->pool->id].sharable, cpu);
	cr_assert_eq(invariants_check(e.P, &vs), 1);
	snprintf(what, sizeof what, "pool %s", g->pool->name);
	expect("supply", what, "free sharable CPUs");
	cpuset_del(&e.P->sup[g->pool->id].sharable, cpu);
}

Test(invariants, a_portion_the_supply_lost_is_named)
{
	struct grant	*g = container("s1");
	char		 what[128];

	e.P->sup[g->pool->id].granted_shared -= g->portion;
	cr_assert_eq(invariants_check(e.P, &vs), 1);
	snprintf(what, sizeof what, "pool %s", g->pool->name);
	expect("supply", what, "accounts 0m shared");
	e.P->sup[g->pool->id].granted_shared += g->portion;
}

Test(invariants, a_pinned_container_on_a_claim_not_held_is_named)
{
	struct grant	*g = container("p1");

	free(g->claims[0]);
	g->claims[0] = xstrdup("gone");
	cr_assert_gt(invariants_check(e.P, &vs), 0);
	expect("pinned", "container p1", "claim gone, which is not held");
	free(g->claims[0]);
	g->claims[0] = xstrdup("c1");
}

Test(invariants, the_list_is_bounded)
{
	json_t	*j;
	int	 i;

	for (i = 0; i < VIOLATIONS_MAX + 5; i++)
		violations_add(&vs, "k", "w", "%d", i);
	cr_assert_eq(vs.n, VIOLATIONS_MAX);
	cr_assert_eq(vs.dropped, 5);
	j = violations_json(&vs);
	cr_assert_eq(json_array_size(j), VIOLATIONS_MAX + 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(j,
	    VIOLATIONS_MAX), "detail")), "5 more not named");
	json_decref(j);
}
