/*
 * test_claims.c: DRA claims in the policy (R-CLAIM-1..9, anchor §9.4) on
 * the recorded server: node k holds the CPUs congruent to k mod 4, thread
 * siblings are n and n+56, CPUs 4-7 and 60-63 are isolated (one core per
 * node), and CPUs 3 and 11 (the first two non-isolated CPUs of node 3) are
 * reserved, as in the upstream tests. Each case of the upstream change's
 * verification list is here.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

ENV_SERVER_SUITE()

TestSuite(claims, .init = env_setup, .fini = env_teardown);

static void
assert_claim(const char *uid, const char *results, const char *want)
{
	char	*got;

	cr_assert_eq(env_claim(&e, uid, results), 0, "claim %s: %s", uid,
	    e.cause ? e.cause : "");
	got = env_claim_cpus(&e);
	cr_assert_str_eq(got, want, "claim %s got %s, expected %s", uid, got,
	    want);
	free(got);
}

static void
assert_refused(const char *uid, const char *results, const char *error)
{
	cr_assert_neq(env_claim(&e, uid, results), 0, "claim %s accepted", uid);
	cr_assert_not_null(e.cause);
	cr_assert_str_eq(e.cause, error);
	cr_assert_null(policy_claim_cpus(e.P, uid), "a refused claim is held");
}

Test(claims, two_cpus_of_a_node_are_one_core)
{
	/* Node 1's lowest idle core is 1 and its sibling 57. */
	assert_claim("u1", "cpudevnuma001=2", "1,57");
	cr_assert_eq(e.fx.nedits, 1);
	cr_assert_str_eq(e.fx.edits[0], "DRA_CPUSET_u1=1,57");
	cr_assert(e.fx.save);
}

Test(claims, several_results_on_one_node_are_disjoint)
{
	/*
	 * 2 from node 0: core 0,56. Then 3: the idle isolated core 4,60 and
	 * the lowest free thread, 8. Every edit carries the whole claim.
	 */
	assert_claim("u2", "cpudevnuma000=2,cpudevnuma000=3", "0,4,8,56,60");
	cr_assert_eq(e.fx.nedits, 2);
	cr_assert_str_eq(e.fx.edits[0], "DRA_CPUSET_u2=0,4,8,56,60");
	cr_assert_str_eq(e.fx.edits[1], "DRA_CPUSET_u2=0,4,8,56,60");
}

Test(claims, results_on_two_nodes)
{
	assert_claim("u3", "cpudevnuma000=1,cpudevnuma002=1", "0,2");
	/* Nodes 0 and 2 meet in socket #0, the deepest pool holding both. */
	cr_assert_str_eq(((struct grant *)strmap_get(e.P->claims, "u3"))->
	    pool->name, "socket #0");
}

Test(claims, whole_node_and_node_less_reserved)
{
	char	want[256] = "";
	int	i;

	for (i = 2; i < 112; i += 4)
		snprintf(want + strlen(want), sizeof want - strlen(want),
		    "%s%d", i == 2 ? "" : ",", i);
	assert_claim("whole", "cpudevnuma002=28", want);
	/* Node 3 offers 28 less its reserved 3 and 11. */
	assert_claim("less", "cpudevnuma003=26", "7,15,19,23,27,31,35,39,43,47,"
	    "51,55,59,63,67,71,75,79,83,87,91,95,99,103,107,111");
}

Test(claims, refused_results)
{
	assert_refused("r1", "cpudevnuma003=27",
	    "result 0 consumed 27 CPUs of node #3, which offers 26");
	assert_refused("r2", "cpudevnuma002=29",
	    "result 0 consumed 29 CPUs of node #2, which offers 28");
	assert_refused("r3", "cpudevnuma009=1",
	    "result 0: unknown device \"cpudevnuma009\"");
	assert_refused("r4", "cpudevnuma001=1,cpudevnuma01=1",
	    "result 1: unknown device \"cpudevnuma01\"");
	assert_refused("r5", "cpudevnuma001=-",
	    "result 0 consumed no dra.cpu/cpu");
	assert_refused("r6", "cpudevnuma001=0",
	    "result 0 consumed 0 dra.cpu/cpu, not a positive whole number");
	assert_refused("r7", "cpudevnuma001=1500m",
	    "result 0 consumed 1500m dra.cpu/cpu, not a positive whole number");
	assert_refused("r8", "", "no allocation results");
	cr_assert_eq(policy_nclaims(e.P), 0);
}

Test(claims, a_claim_spares_shared_capacity)
{
	struct grant	*g;
	struct pool	*n0 = pool_tree_find(e.P->tree, "NUMA node #0");

	/* Shared grants of node 0 leave it one CPU it can slice off. */
	g = grant_new("shared", GRANT_CONTAINER);
	g->pool = n0;
	g->type = CPU_NORMAL;
	g->portion = 25000;
	cr_assert_eq(supply_reserve(e.P, g, &e.cause), 0);
	strmap_put(e.P->ctrs, g->key, g);
	/* 3 CPUs: the free isolated core 4,60 and the one sliceable CPU. */
	assert_claim("spare", "cpudevnuma000=3", "0,4,60");
	assert_refused("more", "cpudevnuma000=2",
	    "node #0: 2 CPUs requested, only 0 free");
	cr_assert_eq(cpuset_count(&e.P->sup[n0->id].sharable), 25);
	cr_assert_eq(supply_allocatable_shared(e.P, n0), 0);
}

Test(claims, reprepare_returns_the_same_cpus)
{
	int	before;

	assert_claim("u", "cpudevnuma001=2", "1,57");
	before = env_free_cpus(&e);
	assert_claim("u", "cpudevnuma001=2", "1,57");
	cr_assert_eq(env_free_cpus(&e), before, "re-prepare took CPUs");
	cr_assert(!e.fx.save, "re-prepare changed the state");
	cr_assert_eq(e.fx.nupdates, 0);
	/* The held CPUs must match what the results consume, node by node. */
	cr_assert_neq(env_claim(&e, "u", "cpudevnuma001=3"), 0);
	cr_assert_str_eq(e.cause, "holds 2 CPUs but consumed 3");
	cr_assert_neq(env_claim(&e, "u", "cpudevnuma000=2"), 0);
	cr_assert_str_eq(e.cause, "holds 0 CPUs of node #0 but consumed 2");
	cr_assert_neq(env_claim(&e, "u", "cpudevnuma000=1,cpudevnuma001=1"), 0);
	cr_assert_str_eq(e.cause, "holds 0 CPUs of node #0 but consumed 1");
}

Test(claims, disjoint_claims_and_exhaustion)
{
	struct cpuset	 all = CPUSET_INITIALIZER;
	const struct cpuset *a, *b;

	cr_assert_eq(env_claim(&e, "a", "cpudevnuma001=14"), 0, "%s", e.cause);
	cr_assert_eq(env_claim(&e, "b", "cpudevnuma001=14"), 0, "%s", e.cause);
	a = policy_claim_cpus(e.P, "a");
	b = policy_claim_cpus(e.P, "b");
	cr_assert(!cpuset_intersects(a, b), "claims share CPUs");
	cpuset_copy(&all, a);
	cpuset_or(&all, b);
	cr_assert_eq(cpuset_count(&all), 28);
	assert_refused("c", "cpudevnuma001=1",
	    "node #1: 1 CPUs requested, only 0 free");
	cpuset_clear(&all);
}

Test(claims, a_failed_claim_leaves_nothing)
{
	int	before = env_free_cpus(&e);

	/* The first result fits; the second cannot: nothing stays. */
	assert_refused("f", "cpudevnuma001=2,cpudevnuma001=27",
	    "node #1: 27 CPUs requested, only 26 free");
	cr_assert_eq(env_free_cpus(&e), before);
	cr_assert_eq(policy_nclaims(e.P), 0);
	assert_claim("g", "cpudevnuma001=2", "1,57");
}

Test(claims, release_and_claim_again)
{
	int	before = env_free_cpus(&e);

	assert_claim("u", "cpudevnuma001=2", "1,57");
	cr_assert_eq(env_free_cpus(&e), before - 2);
	cr_assert_eq(env_release(&e, "u"), 0);
	cr_assert(e.fx.save);
	cr_assert_null(policy_claim_cpus(e.P, "u"));
	cr_assert_eq(env_free_cpus(&e), before);
	assert_claim("v", "cpudevnuma001=2", "1,57");
	/* Releasing what is not held succeeds and changes nothing. */
	cr_assert_eq(env_release(&e, "unknown"), 0);
	cr_assert(!e.fx.save);
	cr_assert_eq(env_release(&e, "u"), 0);
}

static void
reconfigure(const char *json, int ok, const char *error)
{
	struct config	*cfg;
	int		 rc;

	env_reset(&e);
	cr_assert_eq(config_parse(json, strlen(json), &cfg, &e.cause), 0);
	rc = policy_reconfigure(e.P, cfg, &e.fx, &e.cause);
	config_free(cfg);
	if (ok)
		cr_assert_eq(rc, 0, "reconfigure: %s", e.cause);
	else {
		cr_assert_neq(rc, 0, "reconfigure accepted");
		cr_assert_not_null(strstr(e.cause, error), "%s", e.cause);
	}
}

Test(claims, reconfigure_keeps_claims)
{
	assert_claim("u", "cpudevnuma001=2", "1,57");
	reconfigure("{\"reservedResources\":{\"cpu\":\"cpuset:3,11,0\"}}", 1,
	    NULL);
	testlib_assert_set(policy_claim_cpus(e.P, "u"), "1,57");
	testlib_assert_set(pool_tree_reserved(policy_tree(e.P)), "0,3,11");
	/* The claimed CPUs stayed out of the new free supply. */
	assert_claim("w", "cpudevnuma001=2", "5,61");
}

Test(claims, reconfigure_refused_for_a_claimed_cpu)
{
	assert_claim("u", "cpudevnuma001=2", "1,57");
	reconfigure("{\"reservedResources\":{\"cpu\":\"cpuset:1\"}}", 0,
	    "claim u: can't reserve exclusive CPUs (1");
	/* The old configuration is in force and the claim as it was. */
	testlib_assert_set(pool_tree_reserved(policy_tree(e.P)), "3,11");
	testlib_assert_set(policy_claim_cpus(e.P, "u"), "1,57");
	/* Taking the CPU away from what we may use is refused too. */
	reconfigure("{\"reservedResources\":{\"cpu\":\"cpuset:3\"},"
	    "\"availableResources\":{\"cpu\":\"exclude-cpuset:57\"}}", 0,
	    "claim u: ");
}

Test(claims, claim_and_container_with_one_id)
{
	json_t		*doc, *again;
	struct policy	*R;
	char		*cpus;

	assert_claim("same", "cpudevnuma001=2", "1,57");
	cr_assert_eq(env_create(&e, "same", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	reconfigure(ENV_RESERVED_3_11, 1, NULL);
	testlib_assert_set(policy_claim_cpus(e.P, "same"), "1,57");
	cr_assert_not_null(policy_pinning(e.P, "same"));
	cr_assert_eq(policy_ncontainers(e.P), 1);
	doc = policy_save(e.P);
	cr_assert_not_null(json_object_get(json_object_get(doc, "grants"),
	    "claim:same"));
	cr_assert_not_null(json_object_get(json_object_get(doc, "grants"),
	    "same"));
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	testlib_assert_set(policy_claim_cpus(R, "same"), "1,57");
	cr_assert_eq(policy_ncontainers(R), 1);
	again = policy_save(R);
	cr_assert(json_equal(doc, again), "the round trip changed the state");
	cpus = cpuset_format(&((struct grant *)strmap_get(R->ctrs, "same"))->
	    exclusive);
	cr_assert_eq(strlen(cpus) > 0, 1);
	cr_assert(!cpuset_intersects(policy_claim_cpus(R, "same"),
	    &((struct grant *)strmap_get(R->ctrs, "same"))->exclusive));
	free(cpus);
	json_decref(doc);
	json_decref(again);
	policy_free(R);
}

/*
 * A claim keeps its result count (its CDI devices) through a reconfigure
 * and a save and restore, so its spec can be written again at start; one
 * saved without it (an older version) has none to give.
 */
Test(claims, result_count_is_kept)
{
	json_t		*doc;
	struct policy	*R;
	char		**edits, *text, *want;
	int		 n, i;

	assert_claim("two", "cpudevnuma001=1,cpudevnuma001=1", "1,57");
	reconfigure(ENV_RESERVED_3_11, 1, NULL);
	n = policy_claim_edits(e.P, "two", &edits);
	cr_assert_eq(n, 2);
	xasprintf(&want, "DRA_CPUSET_two=%s", "1,57");
	for (i = 0; i < n; i++) {
		cr_assert_str_eq(edits[i], want);
		free(edits[i]);
	}
	free(edits);
	cr_assert_eq(policy_claim_edits(e.P, "nope", &edits), -1);
	doc = policy_save(e.P);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
	    json_object_get(doc, "grants"), "claim:two"), "results")), 2);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	cr_assert_eq(policy_claim_edits(R, "two", &edits), 2);
	for (i = 0; i < 2; i++)
		free(edits[i]);
	free(edits);
	policy_free(R);
	/* The text writer says the same. */
	text = policy_snapshot_text(e.P, 0, NULL, NULL);
	cr_assert(strstr(text, "\"results\":2") != NULL, "%s", text);
	free(text);
	/* Saved without it. */
	json_object_del(json_object_get(json_object_get(doc, "grants"),
	    "claim:two"), "results");
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	cr_assert_eq(policy_claim_edits(R, "two", &edits), 0);
	cr_assert_null(edits);
	policy_free(R);
	json_object_set_new(json_object_get(json_object_get(doc, "grants"),
	    "claim:two"), "results", json_integer(-1));
	cr_assert_neq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0);
	cr_assert(strstr(e.cause, "results") != NULL, "%s", e.cause);
	json_decref(doc);
	free(want);
}

/*
 * The shared overcommit check of anchor §4: 25 shared grants of 990m on
 * node 0 (26 sharable CPUs) leave 1250m; reserving a claim of two sharable
 * CPUs must fail and reserve nothing, one succeeds.
 */
Test(claims, shared_overcommit_is_refused)
{
	struct pool	*n0 = pool_tree_find(e.P->tree, "NUMA node #0");
	struct grant	*g;
	struct cpuset	*two = testlib_set("0,56"), *one = testlib_set("0");
	char		 id[16];
	int		 i, before;

	cr_assert_eq(cpuset_count(&n0->sharable), 26);
	for (i = 0; i < 25; i++) {
		snprintf(id, sizeof id, "s%d", i);
		g = grant_new(id, GRANT_CONTAINER);
		g->pool = n0;
		g->type = CPU_NORMAL;
		g->portion = 990;
		cr_assert_eq(supply_reserve(e.P, g, &e.cause), 0);
		strmap_put(e.P->ctrs, g->key, g);
	}
	cr_assert_eq(supply_allocatable_shared(e.P, n0), 1250);
	before = env_free_cpus(&e);
	cr_assert_neq(claim_reinstate(e.P, "two", two, &e.cause), 0);
	cr_assert_not_null(strstr(e.cause, "can't reserve 0 shared CPUs"),
	    "%s", e.cause);
	cr_assert_eq(env_free_cpus(&e), before);
	cr_assert_eq(policy_nclaims(e.P), 0);
	cr_assert_eq(claim_reinstate(e.P, "one", one, &e.cause), 0, "%s",
	    e.cause);
	cr_assert_eq(env_free_cpus(&e), before - 1);
	cpuset_free(two);
	cpuset_free(one);
}

Test(claims, ids_are_checked)
{
	cr_assert_neq(env_claim(&e, "", "cpudevnuma001=1"), 0);
	cr_assert_neq(env_claim(&e, "a b", "cpudevnuma001=1"), 0);
	cr_assert_neq(env_claim(&e, "a\"b", "cpudevnuma001=1"), 0);
	cr_assert_eq(policy_nclaims(e.P), 0);
}

/*
 * A claim stamps the pools whose free sets it changes: its node and the
 * node's ancestors. A sibling node's containers keep their CPUs, so their
 * path generation stays and they are not looked at again, unless the
 * sibling has nothing sharable and runs on an ancestor's set.
 */
Test(claims, a_claim_stamps_only_the_pools_it_changes)
{
	struct pool	*n[4], *root = pool_tree_root(e.P->tree);
	unsigned long	 g[4], groot;
	char		 name[32];
	int		 i, near = -1, far = -1;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "NUMA node #%d", i);
		cr_assert_not_null(n[i] = pool_tree_find(e.P->tree, name));
	}
	for (i = 0; i < 4; i++)
		g[i] = supply_path_gen(e.P, n[i]);
	groot = supply_path_gen(e.P, root);
	cr_assert_eq(env_claim(&e, "a", "cpudevnuma000=2"), 0);
	cr_assert_neq(supply_path_gen(e.P, n[0]), g[0]);
	cr_assert_neq(supply_path_gen(e.P, root), groot);
	for (i = 1; i < 4; i++)
		cr_assert_eq(supply_path_gen(e.P, n[i]), g[i],
		    "node %d was stamped by a claim on node 0", i);

	/* Node 2 wholly claimed: its containers run on its parent's set. */
	cr_assert_eq(env_claim(&e, "whole", "cpudevnuma002=28"), 0);
	cr_assert(cpuset_empty(&e.P->sup[n[2]->id].sharable));
	for (i = 0; i < 4; i++)
		if (i != 2 && n[i]->parent == n[2]->parent)
			near = i;
		else if (i != 2)
			far = i;
	cr_assert(near >= 0 && far >= 0, "no sibling and no cousin of node 2");
	g[2] = supply_path_gen(e.P, n[2]);
	snprintf(name, sizeof name, "cpudevnuma%03d=1", far);
	cr_assert_eq(env_claim(&e, "far", name), 0);
	cr_assert_eq(supply_path_gen(e.P, n[2]), g[2],
	    "a claim under another parent stamped node 2");
	snprintf(name, sizeof name, "cpudevnuma%03d=1", near);
	cr_assert_eq(env_claim(&e, "near", name), 0);
	cr_assert_neq(supply_path_gen(e.P, n[2]), g[2],
	    "node 2 falls back to a set that changed, and was not stamped");
}

/* How many containers hold a pinning other than the one they would get
 * now: a refresh that skipped one leaves it stale. */
static int
stale_pinnings(void)
{
	struct grant	**v;
	struct pinning	  pin;
	size_t		  i, n;
	int		  stale = 0;

	pinning_init(&pin);
	v = (struct grant **)strmap_values(e.P->ctrs, &n);
	for (i = 0; i < n; i++) {
		policy_pin(e.P, v[i], &pin);
		if (!pinning_equal(&pin, &v[i]->applied))
			stale++;
	}
	free(v);
	pinning_clear(&pin);
	return (stale);
}

/* Shared room of p by its own CPUs and grants, no ancestor asked. */
static int
own_room(const struct pool *p)
{
	int	room = 1000 * cpuset_count(&e.P->sup[p->id].sharable), i;

	room -= e.P->sup[p->id].granted_shared;
	for (i = 0; i < p->nchildren; i++)
		room -= 1000 * cpuset_count(&e.P->sup[p->children[i]->id].
		    sharable) - own_room(p->children[i]);
	return (room);
}

/* How many pools an ancestor's room caps below their own. */
static int
capped_pools(void)
{
	int	np = pool_tree_count(e.P->tree), id, n = 0;

	for (id = 0; id < np; id++)
		n += supply_allocatable_shared(e.P, pool_tree_get(e.P->tree,
		    id)) + 1 < own_room(pool_tree_get(e.P->tree, id));
	return (n);
}

/* The room of every pool at once is the room of each asked alone. */
static void
assert_room(const char *when)
{
	int		 np = pool_tree_count(e.P->tree), id, *room;
	struct pool	*p;

	room = xcalloc(2 * (size_t)np, sizeof *room);
	supply_allocatable_every(e.P, room, room + np);
	for (id = 0; id < np; id++) {
		p = pool_tree_get(e.P->tree, id);
		cr_assert_eq(room[id], supply_allocatable_shared(e.P, p),
		    "%s: shared room of %s", when, p->name);
		cr_assert_eq(room[np + id], supply_allocatable_reserved(e.P, p),
		    "%s: reserved room of %s", when, p->name);
	}
	free(room);
}

/*
 * Containers spread over the pools while claims empty whole nodes and
 * give them back: after each step every container holds the pinning its
 * pool gives it now, those that fall back to an ancestor's set included,
 * and every pool's room is what each is asked alone.
 */
Test(claims, pinnings_stay_current_as_claims_come_and_go)
{
	/* +uid node amount, or -uid; an amount of 0: as much as is free. */
	static const char	*steps[] = {
		"+a 2 0", "+b 0 1", "+c 3 1", "+d 1 0", "-b", "+e 0 20",
		"-a", "+f 2 3", "-d", "-c", "+g 3 0", "-e", "-f", "-g",
	};
	char	 id[16], uid[2], res[32];
	size_t	 i;
	int	 k, node, amount, rc;

	for (k = 0; k < 24; k++) {
		snprintf(id, sizeof id, "s%02d", k);
		/* Mostly BestEffort, which a claim may take a whole node
		 * from; some Burstable, some of them in kube-system. */
		cr_assert_eq(env_create(&e, id, k % 4 == 1 ? "BU" : "BE",
		    k % 4 == 1 ? 200 : -1, -1, k % 8 == 5 ? "kube-system" :
		    "default", NULL, NULL), 0,
		    "create %s: %s", id, e.cause ? e.cause : "");
		cr_assert_eq(stale_pinnings(), 0, "after create %s", id);
		assert_room(id);
	}
	for (i = 0; i < sizeof steps / sizeof *steps; i++) {
		uid[0] = steps[i][1];
		uid[1] = '\0';
		if (steps[i][0] == '+') {
			cr_assert_eq(sscanf(steps[i] + 3, "%d %d", &node,
			    &amount), 2);
			rc = -1;
			for (k = amount ? amount : 28; k > 0 && rc != 0; k--) {
				snprintf(res, sizeof res, "cpudevnuma%03d=%d",
				    node, k);
				rc = env_claim(&e, uid, res);
				if (amount != 0)
					break;
			}
			cr_assert_eq(rc, 0, "%s: %s", steps[i],
			    e.cause ? e.cause : "");
		} else
			cr_assert_eq(env_release(&e, uid), 0, "%s", steps[i]);
		cr_assert_eq(stale_pinnings(), 0, "after %s", steps[i]);
		assert_room(steps[i]);
	}
	/* Burstable containers too big for a node take the shared CPUs of
	 * the pools above, whose room then caps their nodes'. */
	for (k = 0; k < 6; k++) {
		snprintf(id, sizeof id, "big%d", k);
		cr_assert_eq(env_create(&e, id, "BU", 6000 + 2000 * k, -1,
		    "default", NULL, NULL), 0, "create %s: %s", id,
		    e.cause ? e.cause : "");
		cr_assert_eq(stale_pinnings(), 0, "after create %s", id);
		assert_room(id);
	}
	cr_assert_gt(capped_pools(), 0, "an ancestor capped a pool's room");
}
