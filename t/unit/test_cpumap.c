/*
 * test_cpumap.c: the map of the machine (cpumap_json) on the recorded
 * server: node k holds the CPUs congruent to k mod 4, thread siblings are
 * n and n+56, CPUs 4-7 and 60-63 are isolated and CPUs 3 and 11 reserved.
 * Each CPU must be marked by what holds it, and the containers counted on
 * a CPU must be those whose pinning holds it.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cpumap.h"
#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"

#define RESERVED_3_11	"{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"}}"

static struct env	 e;
static json_t		*map;

static void
setup(void)
{
	env_open(&e, testlib_machine("server"), RESERVED_3_11);
	map = NULL;
}

static void
teardown(void)
{
	json_decref(map);
	env_close(&e);
}

TestSuite(cpumap, .init = setup, .fini = teardown);

/* The map as it is now; the last one is dropped. */
static void
remap(void)
{
	json_decref(map);
	map = cpumap_json(e.P);
	cr_assert_not_null(map);
}

static json_t *
cell(int cpu)
{
	json_t	*o;
	size_t	 i;

	json_array_foreach(json_object_get(map, "cpus"), i, o)
		if (json_integer_value(json_object_get(o, "cpu")) == cpu)
			return (o);
	cr_assert_fail("CPU %d is not on the map", cpu);
	return (NULL);
}

static const char *
kind(int cpu)
{
	return (json_string_value(json_object_get(cell(cpu), "kind")));
}

static const char *
text(int cpu, const char *key)
{
	json_t	*v = json_object_get(cell(cpu), key);

	cr_assert(json_is_string(v), "CPU %d has no %s", cpu, key);
	return (json_string_value(v));
}

static long long
number(int cpu, const char *key)
{
	json_t	*v = json_object_get(cell(cpu), key);

	cr_assert(json_is_integer(v), "CPU %d has no %s", cpu, key);
	return (json_integer_value(v));
}

static void
assert_kind(const char *cpus, const char *want)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	char		*why = NULL;
	int		 cpu;

	cr_assert_eq(cpuset_parse(&s, cpus, &why), 0);
	CPUSET_FOREACH(cpu, &s)
		cr_assert_str_eq(kind(cpu), want, "CPU %d is %s, not %s", cpu,
		    kind(cpu), want);
	cpuset_clear(&s);
}

/* The CPUs of a container's pinning, as a set the caller clears. */
static void
pinned(const char *id, struct cpuset *s)
{
	char	*text_cpus = env_cpus_of(&e, id), *why = NULL;

	cpuset_init(s);
	cr_assert_eq(cpuset_parse(s, text_cpus, &why), 0);
	free(text_cpus);
}

/*
 * Every CPU's count is the number of the containers ids[] whose pinning
 * holds it; a CPU without a count has none pinned to it, or only its
 * owner when it is exclusive.
 */
static void
assert_counts(const char *const *ids, int n)
{
	struct cpuset	 s[16];
	json_t		*o, *v;
	size_t		 i;
	int		 cpu, k, want;

	cr_assert_leq(n, 16);
	for (k = 0; k < n; k++)
		pinned(ids[k], &s[k]);
	json_array_foreach(json_object_get(map, "cpus"), i, o) {
		cpu = (int)json_integer_value(json_object_get(o, "cpu"));
		for (want = 0, k = 0; k < n; k++)
			want += cpuset_has(&s[k], cpu);
		if ((v = json_object_get(o, "containers")) == NULL) {
			/* Free, isolated: nobody; exclusive: its owner. */
			cr_assert_eq(want, strcmp(kind(cpu), "exclusive") == 0,
			    "CPU %d is %s with %d pinned to it", cpu,
			    kind(cpu), want);
			continue;
		}
		cr_assert_eq(json_integer_value(v), want,
		    "CPU %d: %lld containers, %d pinned to it", cpu,
		    (long long)json_integer_value(v), want);
	}
	for (k = 0; k < n; k++)
		cpuset_clear(&s[k]);
}

Test(cpumap, an_idle_machine)
{
	remap();
	cr_assert_eq(json_array_size(json_object_get(map, "cpus")), 112);
	assert_kind("4-7,60-63", "isolated");
	assert_kind("3,11", "reserved");
	assert_kind("0-2,8-10,12-59,64-111", "free");
	cr_assert_eq(number(3, "containers"), 0);
	cr_assert_str_eq(text(0, "pool"), "NUMA node #0");
	cr_assert_str_eq(text(57, "pool"), "NUMA node #1");
	/* Where CPU 57 sits: node 1 (package 1), the second thread of
	 * CPU 1's core. */
	cr_assert_eq(number(57, "package"), 1);
	cr_assert_eq(number(57, "node"), 1);
	cr_assert_eq(number(57, "core"), number(1, "core"));
	cr_assert_eq(number(57, "thread"), 1);
	cr_assert_eq(number(1, "thread"), 0);
	cr_assert_null(json_object_get(cell(0), "containers"));
}

Test(cpumap, a_claim_and_its_container)
{
	cr_assert_eq(env_claim_for(&e, "u1", "cpudevnuma001=2", "pod-a"), 0,
	    "%s", e.cause ? e.cause : "");
	remap();
	assert_kind("1,57", "claim");
	cr_assert_str_eq(text(1, "claim"), "u1");
	cr_assert_str_eq(text(57, "pool"), "NUMA node #1");
	cr_assert_eq(number(1, "containers"), 0);

	/* A container of a consumer pod, pinned to the claim's CPUs. */
	cr_assert_eq(env_create(&e, "pod-a", "BE", -1, -1, NULL, NULL,
	    "DRA_CPUSET_u1=1,57"), 0, "%s", e.cause ? e.cause : "");
	remap();
	cr_assert_eq(number(1, "containers"), 1);
	cr_assert_eq(number(57, "containers"), 1);
	assert_kind("1,57", "claim");
}

Test(cpumap, exclusive_shared_and_reserved)
{
	static const char *const ids[] = { "g2", "be1", "be2", "bu", "ks" };
	struct cpuset	 g2;
	int		 cpu, n = 0;

	cr_assert_eq(env_create(&e, "g2", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause ? e.cause : "");
	cr_assert_eq(env_create(&e, "be1", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_create(&e, "be2", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_create(&e, "bu", "BU", 500, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_create(&e, "ks", "BE", -1, -1, "kube-system", NULL,
	    NULL), 0);
	remap();

	pinned("g2", &g2);
	cr_assert_eq(cpuset_count(&g2), 2);
	CPUSET_FOREACH(cpu, &g2) {
		cr_assert_str_eq(kind(cpu), "exclusive");
		cr_assert_str_eq(text(cpu, "container"), "g2");
		cr_assert(json_is_false(json_object_get(cell(cpu),
		    "isolated")));
	}
	cpuset_clear(&g2);

	/* kube-system runs on the reserved CPUs. */
	assert_kind("3,11", "reserved");
	cr_assert_eq(number(3, "containers"), 1);
	cr_assert_eq(number(11, "containers"), 1);

	/* Every shared container's CPUs are shared, none left free there. */
	assert_counts(ids, 5);
	for (cpu = 0; cpu < 112; cpu++)
		if (strcmp(kind(cpu), "shared") == 0) {
			cr_assert_geq(number(cpu, "containers"), 1);
			cr_assert(json_is_string(json_object_get(cell(cpu),
			    "pool")));
			n++;
		}
	cr_assert_gt(n, 0);
	assert_kind("4-7,60-63", "isolated");
}

Test(cpumap, an_isolated_exclusive_cpu)
{
	struct cpuset	s;
	int		cpu;

	/* One whole CPU prefers the kernel-isolated ones. */
	cr_assert_eq(env_create(&e, "g1", "G", 1000, 1000, NULL, NULL, NULL),
	    0, "%s", e.cause ? e.cause : "");
	remap();
	pinned("g1", &s);
	cr_assert_eq(cpuset_count(&s), 1);
	cpu = cpuset_first(&s);
	cr_assert_str_eq(kind(cpu), "exclusive");
	cr_assert(json_is_true(json_object_get(cell(cpu), "isolated")),
	    "CPU %d", cpu);
	cpuset_clear(&s);
}

Test(cpumap, counts_follow_a_removal)
{
	static const char *const ids[] = { "be1" };

	cr_assert_eq(env_create(&e, "be1", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_create(&e, "be2", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_remove(&e, "be2"), 0);
	remap();
	assert_counts(ids, 1);
}

Test(cpumap, offline_and_unmanaged_cpus)
{
	env_close(&e);
	env_open_spec(&e, "packages=1,nodes=2,cores=2,threads=2,"
	    "numbering=adjacent,offline=5",
	    "{\"availableResources\":{\"cpu\":\"exclude-cpuset:7\"},"
	    "\"reservedResources\":{\"cpu\":\"cpuset:6\"}}");
	remap();
	cr_assert_eq(json_array_size(json_object_get(map, "cpus")), 8);
	assert_kind("5", "offline");
	cr_assert(json_is_null(json_object_get(cell(5), "node")));
	cr_assert(json_is_null(json_object_get(cell(5), "core")));
	assert_kind("7", "unmanaged");
	assert_kind("6", "reserved");
	assert_kind("0-4", "free");
	/* CPU 4's sibling is offline: it is the only thread of its core. */
	cr_assert_eq(number(4, "thread"), 0);
}
