/*
 * test_preferences.c: the isolation preference of a container (request.c)
 * as the Go policy decides it (pod-preferences.go, isolatedCPUsPreference
 * and strictIsolatedCPUsPreference): its test table TestPodIsolationPreference
 * with the config's preferIsolatedCPUs false, then the scope rule: of
 * require-isolated-cpus and prefer-isolated-cpus, the narrower scope wins,
 * require at the same scope.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"

#define NO_ISOLATION	"{\"preferIsolatedCPUs\":false}"
#define PREFER		"prefer-isolated-cpus.resource-policy.nri.io"
#define REQUIRE		"require-isolated-cpus.resource-policy.nri.io"

static struct env	e;

static void
setup(void)
{
	env_open(&e, testlib_machine("server"), NO_ISOLATION);
}

static void
teardown(void)
{
	env_close(&e);
}

TestSuite(preferences, .init = setup, .fini = teardown);

struct isocase {
	const char	*name;
	const char	*container;
	const char	*keys[2];
	const char	*values[2];
	int		 isolate;
	int		 annotated;
	int		 strict;
};

static void
check(const struct isocase *t)
{
	struct container_spec	 s;
	struct policy_kv	 ann[2];
	struct cspec		 c;
	int			 i, n = 0, annotated, strict, iso;

	memset(&s, 0, sizeof s);
	s.id = "x";
	s.name = t->container;
	s.qos = QOS_GUARANTEED;
	s.cpu_request = s.cpu_limit = 1000;
	for (i = 0; i < 2 && t->keys[i] != NULL; i++, n++) {
		ann[i].key = (char *)t->keys[i];
		ann[i].value = (char *)t->values[i];
	}
	s.annotations = ann;
	s.nannotations = n;
	cspec_copy(&c, &s);
	iso = request_isolation(e.P, &c, &annotated, &strict);
	cr_assert_eq(iso, t->isolate, "%s: isolate %d", t->name, iso);
	cr_assert_eq(annotated, t->annotated, "%s: annotated %d", t->name,
	    annotated);
	cr_assert_eq(strict, t->strict, "%s: strict %d", t->name, strict);
	cspec_clear(&c);
}

/* TestPodIsolationPreference (its cases that can be written here). */
Test(preferences, go_isolation_table)
{
	static const struct isocase cases[] = {
		{ "return defaults", "c0", { NULL }, { NULL }, 0, 0, 0 },
		{ "prefer resmgr's annotation value", "c0",
		  { PREFER "/container.c0" }, { "true" }, 1, 1, 0 },
		{ "return defined preferences", "testcontainer",
		  { PREFER "/container.testcontainer" }, { "false" }, 0, 1, 0 },
		{ "prefer resmgr's annotation value (false)", "c0",
		  { PREFER "/container.c0" }, { "false" }, 0, 1, 0 },
		{ "return defaults for unparsable annotation value", "c0",
		  { PREFER "/container.c0" }, { "blah" }, 0, 0, 0 },
		{ "return defaults for missing preferences", "c1",
		  { PREFER "/container.c0" }, { "true" }, 0, 0, 0 },
	};
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check(&cases[i]);
}

Test(preferences, the_narrower_scope_wins)
{
	static const struct isocase cases[] = {
		/* The case: container prefer beats pod require. */
		{ "container prefer, pod require", "c0",
		  { PREFER "/container.c0", REQUIRE "/pod" }, { "true", "true" },
		  1, 1, 0 },
		{ "pod prefer false, container require", "c0",
		  { PREFER "/pod", REQUIRE "/container.c0" }, { "false", "true" },
		  1, 1, 1 },
		{ "same scope: require wins", "c0",
		  { PREFER "/pod", REQUIRE "/pod" }, { "false", "true" },
		  1, 1, 1 },
		{ "unscoped require, pod prefer false", "c0",
		  { PREFER "/pod", REQUIRE }, { "false", "true" }, 0, 1, 0 },
		{ "require false counts as the one, not strict in effect", "c0",
		  { REQUIRE "/container.c0" }, { "false" }, 0, 1, 1 },
		{ "require unparsable: the config, strict", "c0",
		  { REQUIRE "/pod" }, { "yes" }, 0, 0, 1 },
		{ "Go's booleans only", "c0", { PREFER }, { "TrUe" }, 0, 0, 0 },
		{ "Go's booleans: T", "c0", { PREFER }, { "T" }, 1, 1, 0 },
	};
	size_t	i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check(&cases[i]);
}

/*
 * Where no CPU is isolated, a container that prefers isolation at its own
 * scope is created even though its pod requires it; one that requires it
 * at the narrower scope is refused.
 */
Test(preferences, prefer_beats_a_wider_require_when_none_is_isolated)
{
	struct env	d;
	char		*cause;

	/* The desktop has no isolated CPU. */
	env_open(&d, testlib_machine("desktop"), "{}");
	cr_assert_eq(env_create(&d, "c0", "G", 1000, 1000, NULL,
	    PREFER "/container.c0=true;" REQUIRE "/pod=true", NULL), 0, "%s",
	    d.cause);
	cr_assert_neq(env_create(&d, "c1", "G", 1000, 1000, NULL,
	    PREFER "/pod=true;" REQUIRE "/container.c1=true", NULL), 0);
	cause = d.cause;
	cr_assert_not_null(strstr(cause, "isolated"), "%s", cause);
	env_close(&d);
}

/*
 * unlimited-burstable by container, as the Go e2e test
 * n4c16/test14-burstable annotates it: numa gives one NUMA node, system
 * all four, die (n4c16 has none) the next level up, a package of two;
 * without it, the config's package. Burstable, 2 CPUs, no limit.
 */
#define N4C16	"packages=2,nodes=2,cores=2,threads=2,numbering=adjacent,mem=2G"
#define UB	"unlimited-burstable.resource-policy.nri.io"

/* n4c16, made afresh (the folder's name is freed here). */
static struct topology *
n4c16(void)
{
	char		*dir = testlib_mksysfs(N4C16);
	struct topology	*t = testlib_topology(dir);

	free(dir);
	return (t);
}

static int
nodes_of(struct env *d, const char *id, const char *annotations)
{
	cr_assert_eq(env_create(d, id, "BU", 2000, -1, NULL, annotations,
	    NULL), 0, "%s: %s", id, d->cause);
	return (cpuset_count(&d->fx.self.mems));
}

Test(preferences, unlimited_burstable_by_container)
{
	struct env	d;

	env_open(&d, n4c16(),
	    "{\"reservedResources\":{\"cpu\":\"750m\"}}");
	cr_assert_eq(nodes_of(&d, "pod6c0", UB "/container.pod6c0=numa"), 1);
	cr_assert_eq(nodes_of(&d, "pod6c1", UB "/container.pod6c1=system"), 4);
	cr_assert_eq(nodes_of(&d, "pod7c0", UB "/container.pod7c0=numa"), 1);
	cr_assert_eq(nodes_of(&d, "pod7c1", UB "/container.pod7c1=die"), 2);
	/* Pod scope, unscoped, and the config's default. */
	cr_assert_eq(nodes_of(&d, "p8", UB "/pod=numa"), 1);
	cr_assert_eq(nodes_of(&d, "p9", UB "=system"), 4);
	cr_assert_eq(nodes_of(&d, "p10", NULL), 2);
	env_close(&d);
}

Test(preferences, unlimited_burstable_odd_levels)
{
	struct env	d;

	env_open(&d, n4c16(), "{}");
	/* Deeper than the tree: its deepest; not a level: the config's. */
	cr_assert_eq(nodes_of(&d, "p11", UB "=core"), 1);
	cr_assert_eq(nodes_of(&d, "p12", UB "=wat"), 2);
	env_close(&d);
}

Test(preferences, unlimited_burstable_config_numa)
{
	struct env	d;

	env_open(&d, n4c16(),
	    "{\"unlimitedBurstable\":\"numa\"}");
	cr_assert_eq(nodes_of(&d, "a", NULL), 1);
	cr_assert_eq(nodes_of(&d, "b", UB "/container.b=package"), 2);
	env_close(&d);
}

/*
 * cpu.preserve and memory.preserve (PreserveCpuResources,
 * PreserveMemoryResources: exactly "true"): the CPUs, or the memory
 * nodes, are left as the runtime set them, nothing is taken from any
 * pool, and grants shows what is left alone as null. A claim's consumer
 * is pinned to its claim all the same.
 */
#define CPU_PRESERVE_KEY	"cpu.preserve.resource-policy.nri.io"
#define MEM_PRESERVE_KEY	"memory.preserve.resource-policy.nri.io"

static json_t *
grant_of(struct env *d, const char *id)
{
	json_t	*a = policy_grants_json(d->P), *g;
	size_t	 i;

	json_array_foreach(a, i, g)
		if (json_is_string(json_object_get(g, "id")) &&
		    strcmp(json_string_value(json_object_get(g, "id")), id) ==
		    0) {
			json_incref(g);
			json_decref(a);
			return (g);
		}
	json_decref(a);
	cr_assert_fail("no grant of %s", id);
	return (NULL);
}

Test(preferences, preserve)
{
	json_t	*g;
	char	*cpus, kv[128];
	int	 before = env_free_cpus(&e);

	/* Its CPUs left alone, its memory pinned; nothing taken. */
	cr_assert_eq(env_create(&e, "p", "G", 2000, 2000, NULL,
	    CPU_PRESERVE_KEY "=true", NULL), 0, "%s", e.cause);
	cr_assert(!e.fx.self.pin_cpus);
	cr_assert(e.fx.self.pin_mems);
	cr_assert_eq(env_free_cpus(&e), before);
	g = grant_of(&e, "p");
	cr_assert(json_is_null(json_object_get(g, "cpus")));
	cr_assert(json_is_string(json_object_get(g, "mems")));
	json_decref(g);
	/* Its memory left alone, its CPUs pinned. */
	cr_assert_eq(env_create(&e, "m", "BE", -1, -1, NULL,
	    MEM_PRESERVE_KEY "/pod=true", NULL), 0, "%s", e.cause);
	cr_assert(e.fx.self.pin_cpus);
	cr_assert(!e.fx.self.pin_mems);
	g = grant_of(&e, "m");
	cr_assert(json_is_null(json_object_get(g, "mems")));
	cr_assert(json_is_string(json_object_get(g, "cpus")));
	json_decref(g);
	/* Both. */
	cr_assert_eq(env_create(&e, "b", "BU", 500, 1000, NULL,
	    CPU_PRESERVE_KEY "=true;" MEM_PRESERVE_KEY "=true", NULL), 0);
	cr_assert(!e.fx.self.pin_cpus && !e.fx.self.pin_mems);
	cr_assert_eq(env_free_cpus(&e), before);
	/* Go reads exactly "true". */
	cr_assert_eq(env_create(&e, "t", "G", 1000, 1000, NULL,
	    CPU_PRESERVE_KEY "=True", NULL), 0);
	cr_assert(e.fx.self.pin_cpus);
	cr_assert_eq(env_free_cpus(&e), before - 1);
	/* A claim's consumer runs on its claim whatever it preserves. */
	cr_assert_eq(env_claim_for(&e, "k", "cpudevnuma001=2", "c"), 0, "%s",
	    e.cause);
	cpus = env_claim_cpus(&e);
	snprintf(kv, sizeof kv, "DRA_CPUSET_k=%s", cpus);
	cr_assert_eq(env_create(&e, "c", "BE", -1, -1, NULL,
	    CPU_PRESERVE_KEY "=true", kv), 0, "%s", e.cause);
	cr_assert(e.fx.self.pin_cpus);
	testlib_assert_set(&e.fx.self.cpus, cpus);
	free(cpus);
}

/* What is preserved stays so across a restart. */
Test(preferences, preserve_survives_a_restart)
{
	struct policy	*R;
	json_t		*doc, *g;
	char		*cause = NULL;

	cr_assert_eq(env_create(&e, "p", "G", 2000, 2000, NULL,
	    CPU_PRESERVE_KEY "=true", NULL), 0, "%s", e.cause);
	doc = policy_save(e.P);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &cause), 0, "%s",
	    cause);
	g = policy_grants_json(R);
	cr_assert(json_is_null(json_object_get(json_array_get(g, 0), "cpus")));
	cr_assert(!policy_pinning(R, "p")->pin_cpus);
	json_decref(g);
	json_decref(doc);
	policy_free(R);
}

/*
 * CPU priority on a hybrid machine (GetScore counts P-core capacity as
 * high-priority capacity, E-cores as low): n4c16 with P-cores {0,1} and
 * {4,5}, every other core efficient, 750m reserved (CPU 0), isolation not
 * preferred. Three Guaranteed 1-CPU containers, the first and third
 * preferring high priority: each of those gets a P-core, however the
 * second has taken from the pools.
 */
Test(preferences, high_priority_gets_performance_cores)
{
	static const char *const ids[] = { "c0", "c1", "c2" };
	const struct cpuset	*perf;
	struct env		 d;
	char			*dir;
	size_t			 i;

	dir = testlib_mksysfs("packages=2,nodes=2,cores=2,threads=2,"
	    "numbering=adjacent,mem=2G,ecpus=2-3,6-15");
	env_open(&d, testlib_topology(dir), "{\"reservedResources\":{\"cpu\":\"750m\"},"
	    "\"preferIsolatedCPUs\":false}");
	perf = topology_kind_cpus(d.topo, CORE_KIND_PERF);
	testlib_assert_set(perf, "0-1,4-5");
	for (i = 0; i < 3; i++) {
		cr_assert_eq(env_create(&d, ids[i], "G", 1000, 1000, NULL,
		    i != 1 ? "prefer-cpu-priority.resource-policy.nri.io=high" :
		    NULL, NULL), 0, "%s: %s", ids[i], d.cause);
		cr_assert_eq(cpuset_count(&d.fx.self.cpus), 1);
		if (i != 1)
			cr_assert(cpuset_subset(&d.fx.self.cpus, perf),
			    "%s got an E-core", ids[i]);
	}
	/* A fourth wanting high priority: one P-core is left (CPU 0 is
	 * reserved), and it gets it. */
	cr_assert_eq(env_create(&d, "c3", "G", 1000, 1000, NULL,
	    "prefer-cpu-priority.resource-policy.nri.io=high", NULL), 0,
	    "%s", d.cause);
	cr_assert(cpuset_subset(&d.fx.self.cpus, perf), "c3 got an E-core");
	env_close(&d);
	free(dir);
}
