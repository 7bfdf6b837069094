/*
 * test_grants.c: container grants by QoS class (R-POOL-2..4, anchor §2),
 * the updates of shared containers when exclusive CPUs come and go (§4),
 * containers pinned by their claims (R-CLAIM-9), sync and the saved state
 * (R-STATE-1), on the recorded server with CPUs 3 and 11 reserved. There
 * socket #0 holds the even CPUs (nodes 0 and 2), socket #1 the odd ones,
 * and the isolated CPUs are 4-7 and 60-63.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

static struct env	e;

static void
setup(void)
{
	env_open(&e, testlib_machine("server"),
	    "{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"}}");
}

static void
teardown(void)
{
	env_close(&e);
}

TestSuite(grants, .init = setup, .fini = teardown);

static void
create(const char *id, const char *qos, long long req, long long lim,
    const char *ns, const char *ann, const char *env)
{
	cr_assert_eq(env_create(&e, id, qos, req, lim, ns, ann, env), 0,
	    "create %s: %s", id, e.cause ? e.cause : "");
	cr_assert_str_eq(e.fx.self.id, id);
	cr_assert(e.fx.save);
}

static void
assert_cpus(const char *id, const char *want)
{
	char	*got = env_cpus_of(&e, id);

	cr_assert_str_eq(got, want, "%s runs on %s, expected %s", id, got,
	    want);
	free(got);
}

/* The even (socket #0) or odd CPUs of 0-111, less some. */
static char *
socket_less(int parity, const char *less)
{
	struct cpuset	 s = CPUSET_INITIALIZER, *l = testlib_set(less);
	char		*out;
	int		 i;

	for (i = parity; i < 112; i += 2)
		cpuset_add(&s, i);
	cpuset_andnot(&s, l);
	out = cpuset_format(&s);
	cpuset_clear(&s);
	cpuset_free(l);
	return (out);
}

Test(grants, guaranteed_whole_cpus_are_exclusive)
{
	create("g2", "G", 2000, 2000, NULL, NULL, NULL);
	/* Two CPUs are one idle core, not isolated (not annotated). */
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 2);
	cr_assert_eq(cpuset_last(&e.fx.self.cpus) - cpuset_first(&e.fx.self.cpus),
	    56, "not the two threads of one core");
	cr_assert(!cpuset_intersects(&e.fx.self.cpus, topology_isolated(e.topo)));
	cr_assert_eq(e.fx.self.shares, 2048);
	/* Memory: the DRAM node of the pool, never PMEM. */
	cr_assert_eq(cpuset_count(&e.fx.self.mems), 1);
	cr_assert_lt(cpuset_first(&e.fx.self.mems), 4);
}

Test(grants, one_cpu_prefers_isolated)
{
	create("g1", "G", 1000, 1000, NULL, NULL, NULL);
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 1);
	cr_assert(cpuset_subset(&e.fx.self.cpus, topology_isolated(e.topo)),
	    "a 1-CPU Guaranteed container got no isolated CPU");
	/* Annotated off, it gets an ordinary CPU. */
	create("g1b", "G", 1000, 1000, NULL,
	    "prefer-isolated-cpus.resource-policy.nri.io=false", NULL);
	cr_assert(!cpuset_intersects(&e.fx.self.cpus,
	    topology_isolated(e.topo)));
}

Test(grants, several_cpus_isolated_only_when_annotated)
{
	create("g4", "G", 2000, 2000, NULL,
	    "prefer-isolated-cpus.resource-policy.nri.io=true", NULL);
	cr_assert(cpuset_subset(&e.fx.self.cpus, topology_isolated(e.topo)));
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 2);
}

Test(grants, burstable_and_besteffort_share)
{
	char	*even = socket_less(0, "4,6,60,62");

	/* Unlimited burstable goes to a socket, the one with more to share. */
	create("bu", "BU", 500, -1, NULL, NULL, NULL);
	assert_cpus("bu", even);
	cr_assert_eq(e.fx.self.shares, 512);
	create("be", "BE", -1, -1, NULL, NULL, NULL);
	cr_assert_eq(cpuset_count(&e.fx.self.cpus) > 20, 1);
	cr_assert_eq(e.fx.self.shares, 2);
	cr_assert(!cpuset_intersects(&e.fx.self.cpus, topology_isolated(e.topo)));
	free(even);
}

Test(grants, fractions_share_and_mixed)
{
	create("frac", "G", 500, 500, NULL, NULL, NULL);
	cr_assert_gt(cpuset_count(&e.fx.self.cpus), 20);
	create("mixed", "G", 1500, 1500, NULL, NULL, NULL);
	/* One isolated exclusive CPU plus the pool's shared CPUs. */
	cr_assert_eq(cpuset_and_count(&e.fx.self.cpus,
	    topology_isolated(e.topo)), 1);
	cr_assert_gt(cpuset_count(&e.fx.self.cpus), 20);
	cr_assert_eq(e.fx.self.shares, 1536);
	/* Prefer-shared keeps whole CPUs shared. */
	create("ps", "G", 2000, 2000, NULL,
	    "prefer-shared-cpus.resource-policy.nri.io=true", NULL);
	cr_assert_gt(cpuset_count(&e.fx.self.cpus), 20);
}

Test(grants, reserved_namespaces)
{
	static const char ns_config[] = "{\"reservedResources\":{\"cpu\":"
	    "\"cpuset:3,11\"},\"reservedPoolNamespaces\":[\"mon-*\"]}";
	struct config	*cfg;

	create("sys", "BU", 100, -1, "kube-system", NULL, NULL);
	assert_cpus("sys", "3,11");
	create("ann", "BU", 100, -1, "default",
	    "prefer-reserved-cpus.resource-policy.nri.io/pod=true", NULL);
	assert_cpus("ann", "3,11");
	env_reset(&e);
	cr_assert_eq(config_parse(ns_config, strlen(ns_config), &cfg,
	    &e.cause), 0, "%s", e.cause);
	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0);
	config_free(cfg);
	create("mon", "G", 1000, 1000, "mon-system", NULL, NULL);
	assert_cpus("mon", "3,11");
	create("other", "G", 1000, 1000, "monitoring", NULL, NULL);
	cr_assert(!cpuset_intersects(&e.fx.self.cpus,
	    pool_tree_reserved(policy_tree(e.P))));
}

Test(grants, shared_containers_follow_exclusive_grants)
{
	const struct pinning	*u;
	char			*even = socket_less(0, "4,6,60,62"), *less;

	create("bu", "BU", 500, -1, NULL, NULL, NULL);
	assert_cpus("bu", even);
	/* An exclusive container on socket #0 takes a core from bu. */
	create("x", "G", 2000, 2000, NULL, NULL, NULL);
	cr_assert_eq(cpuset_first(&e.fx.self.cpus) % 2, 0);
	u = env_update(&e, "bu");
	cr_assert_not_null(u, "bu was not updated");
	cr_assert_eq(e.fx.nupdates, 1, "only bu changed");
	cr_assert(!cpuset_intersects(&u->cpus, &e.fx.self.cpus));
	less = cpuset_format(&e.fx.self.cpus);
	free(even);
	even = socket_less(0, "4,6,60,62");
	/* The exclusive container leaves: bu gets the core back. */
	cr_assert_eq(env_remove(&e, "x"), 0);
	u = env_update(&e, "bu");
	cr_assert_not_null(u);
	assert_cpus("bu", even);
	/* Removing again is harmless and updates nobody. */
	cr_assert_eq(env_remove(&e, "x"), 0);
	cr_assert_eq(e.fx.nupdates, 0);
	free(less);
	free(even);
}

Test(grants, shared_containers_move_off_claimed_cpus)
{
	const struct pinning	*u;
	char			*even = socket_less(0, "4,6,60,62");

	create("be", "BE", -1, -1, NULL, NULL, NULL);
	create("bu", "BU", 500, -1, NULL, NULL, NULL);
	assert_cpus("bu", even);
	cr_assert_eq(env_claim(&e, "c", "cpudevnuma000=2"), 0, "%s", e.cause);
	u = env_update(&e, "bu");
	cr_assert_not_null(u, "bu was not moved off the claim");
	cr_assert(!cpuset_intersects(&u->cpus, &e.fx.claim_cpus));
	cr_assert(!cpuset_intersects(&u->cpus, policy_claim_cpus(e.P, "c")));
	cr_assert_eq(env_release(&e, "c"), 0);
	u = env_update(&e, "bu");
	cr_assert_not_null(u, "bu did not get the CPUs back");
	assert_cpus("bu", even);
	free(even);
}

Test(grants, containers_never_get_claimed_cpus)
{
	int	i;
	char	id[16];

	cr_assert_eq(env_claim(&e, "c", "cpudevnuma000=26"), 0, "%s", e.cause);
	for (i = 0; i < 6; i++) {
		snprintf(id, sizeof id, "g%d", i);
		create(id, "G", 2000, 2000, NULL, NULL, NULL);
		cr_assert(!cpuset_intersects(&e.fx.self.cpus,
		    policy_claim_cpus(e.P, "c")));
	}
	create("be", "BE", -1, -1, NULL, NULL, NULL);
	cr_assert(!cpuset_intersects(&e.fx.self.cpus,
	    policy_claim_cpus(e.P, "c")));
}

Test(grants, hide_hyperthreads)
{
	create("h", "G", 4000, 4000, NULL,
	    "hide-hyperthreads.resource-policy.nri.io=true", NULL);
	/* Two cores, one thread of each: siblings differ by 56. */
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 2);
	cr_assert_lt(cpuset_last(&e.fx.self.cpus), 56);
}

Test(grants, update_changes_the_grant)
{
	cr_assert_eq(env_create(&e, "u", "G", 2000, 2000, NULL, NULL, NULL), 0);
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "u", 4000, 4000, &e.fx, &e.cause), 0,
	    "%s", e.cause);
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 4);
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "nope", 1000, 1000, &e.fx, &e.cause),
	    0);
	/* An update that cannot fit leaves the old grant. */
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "u", 200000, 200000, &e.fx,
	    &e.cause), 0);
	cr_assert_eq(cpuset_count(&policy_pinning(e.P, "u")->cpus), 4);
}

Test(grants, a_request_that_cannot_fit_is_refused_whole)
{
	int	before = env_free_cpus(&e);

	cr_assert_neq(env_create(&e, "big", "G", 120000, 120000, NULL, NULL,
	    NULL), 0);
	cr_assert_not_null(e.cause);
	cr_assert_eq(env_free_cpus(&e), before);
	cr_assert_null(policy_pinning(e.P, "big"));
	cr_assert_neq(env_create(&e, "", "BE", -1, -1, NULL, NULL, NULL), 0);
}

Test(grants, claim_pinning_by_environment)
{
	char	env[128];

	cr_assert_eq(env_claim(&e, "uid-1", "cpudevnuma001=2"), 0, "%s",
	    e.cause);
	snprintf(env, sizeof env, "DRA_CPUSET_uid-1=1,57");
	create("p", "BE", -1, -1, NULL, NULL, env);
	assert_cpus("p", "1,57");
	/* The DRAM node of those CPUs. */
	testlib_assert_set(&e.fx.self.mems, "1");
	/* A forged value is ignored, and said so. */
	create("f", "BE", -1, -1, NULL, NULL, "DRA_CPUSET_uid-1=1-3");
	cr_assert(!cpuset_equal(&e.fx.self.cpus, policy_claim_cpus(e.P,
	    "uid-1")));
	cr_assert_eq(e.fx.nwarnings, 1);
	create("g", "BE", -1, -1, NULL, NULL, "DRA_CPUSET_nobody=1,57");
	cr_assert(!cpuset_has(&e.fx.self.cpus, 1));
	cr_assert_eq(e.fx.nwarnings, 1);
	/* The claim goes: the container becomes an ordinary one. */
	cr_assert_eq(env_release(&e, "uid-1"), 0);
	cr_assert_not_null(env_update(&e, "p"));
	cr_assert(!cpuset_equal(&env_update(&e, "p")->cpus, &e.fx.claim_cpus));
	cr_assert_gt(cpuset_count(&env_update(&e, "p")->cpus), 2);
}

Test(grants, sync_releases_gone_and_allocates_new)
{
	struct container_spec	 specs[2];
	int			 before = env_free_cpus(&e);

	create("old", "G", 2000, 2000, NULL, NULL, NULL);
	create("keep", "G", 2000, 2000, NULL, NULL, NULL);
	memset(specs, 0, sizeof specs);
	specs[0].id = "keep";
	specs[0].qos = QOS_GUARANTEED;
	specs[0].cpu_request = specs[0].cpu_limit = 2000;
	specs[1].id = "new";
	specs[1].qos = QOS_BESTEFFORT;
	specs[1].cpu_request = specs[1].cpu_limit = -1;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, specs, 2, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert_null(policy_pinning(e.P, "old"));
	cr_assert_eq(policy_ncontainers(e.P), 2);
	cr_assert_eq(env_free_cpus(&e), before - 2);
	cr_assert_not_null(env_update(&e, "new"), "new got no pinning");
	/* Listing one container twice is refused whole. */
	specs[1].id = "keep";
	env_reset(&e);
	cr_assert_neq(policy_sync(e.P, specs, 2, &e.fx, &e.cause), 0);
	cr_assert_not_null(policy_pinning(e.P, "new"));
}

Test(grants, state_round_trip)
{
	json_t		*doc, *again;
	struct policy	*R;

	create("a", "G", 2000, 2000, NULL, NULL, NULL);
	create("b", "BU", 500, 1000, "ns", "x.resource-policy.nri.io=1", NULL);
	create("c", "BE", -1, -1, "kube-system", NULL, NULL);
	cr_assert_eq(env_claim(&e, "k", "cpudevnuma003=3"), 0, "%s", e.cause);
	doc = policy_save(e.P);
	cr_assert_eq(json_integer_value(json_object_get(doc, "version")), 1);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	again = policy_save(R);
	cr_assert(json_equal(doc, again));
	cr_assert(cpuset_equal(policy_claim_cpus(R, "k"),
	    policy_claim_cpus(e.P, "k")));
	json_decref(again);
	json_decref(doc);
	policy_free(R);
}

static void
restore_refused(const char *text, const char *error)
{
	json_t		*doc;
	json_error_t	 err;
	struct policy	*R = NULL;

	doc = json_loads(text, 0, &err);
	cr_assert_not_null(doc, "%s", text);
	env_reset(&e);
	cr_assert_neq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0,
	    "%s restored", text);
	cr_assert_null(R);
	cr_assert_not_null(strstr(e.cause, error), "%s: %s", text, e.cause);
	json_decref(doc);
}

Test(grants, bad_state_documents)
{
	restore_refused("[]", "not a state document");
	restore_refused("{\"version\":2,\"grants\":{}}", "newer");
	restore_refused("{\"version\":1}", "not a state document");
	restore_refused("{\"version\":1,\"grants\":{\"claim:x\":{\"kind\":"
	    "\"claim\",\"cpus\":\"1-\",\"pool\":\"root\"}}}", "1-");
	restore_refused("{\"version\":1,\"grants\":{\"claim:x\":{\"kind\":"
	    "\"claim\",\"cpus\":\"\",\"pool\":\"root\"}}}", "without CPUs");
	restore_refused("{\"version\":1,\"grants\":{\"c\":{\"kind\":"
	    "\"wat\"}}}", "unknown kind");
	restore_refused("{\"version\":1,\"grants\":{\"claim:a\":{\"kind\":"
	    "\"claim\",\"cpus\":\"1\",\"pool\":\"root\"},\"claim:b\":{\"kind\":"
	    "\"claim\",\"cpus\":\"1\",\"pool\":\"root\"}}}", "can't reserve");
	restore_refused("{\"version\":1,\"grants\":{\"c\":{\"kind\":"
	    "\"container\"}}}", "malformed");
}
