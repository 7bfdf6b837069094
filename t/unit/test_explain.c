/*
 * explain: each placement keeps how it was decided, and policy_explain
 * says it. The deciding rules are set up on purpose here (a node short of
 * capacity, a pull of affinity, a reserved CPU that leaves a node less to
 * slice), so each test knows which rule must be named.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "cpuset.h"
#include "explain.h"
#include "policy_priv.h"
#include "policylib.h"
#include "strmap.h"
#include "testlib.h"
#include "xmalloc.h"

/* Two packages of two nodes of two cores of two threads: 16 CPUs,
 * CPU 0 (node 0) reserved. */
#define SMALL	"packages=2,nodes=2,cores=2,threads=2"
#define CONFIG	"{\"reservedResources\":{\"cpu\":\"cpuset:0\"}}"

static struct env	e;

static void
small(void)
{
	env_open_spec(&e, SMALL, CONFIG);
}

static void
fini(void)
{
	env_close(&e);
}

static json_t *
explain(const char *id)
{
	char	*cause = NULL;
	json_t	*o = policy_explain(e.P, id, &cause);

	cr_assert_not_null(o, "explain %s: %s", id, cause);
	return (o);
}

static const char *
s_at(json_t *o, const char *path)
{
	char	*copy = xstrdup(path), *tok, *save = NULL;
	json_t	*v = o;
	static char	buf[256];

	for (tok = strtok_r(copy, ".", &save); tok != NULL && v != NULL;
	    tok = strtok_r(NULL, ".", &save)) {
		if (json_is_array(v))
			v = json_array_get(v, (size_t)atoi(tok));
		else
			v = json_object_get(v, tok);
	}
	free(copy);
	cr_assert(json_is_string(v), "%s is not a string", path);
	snprintf(buf, sizeof buf, "%s", json_string_value(v));
	return (buf);
}

/* The candidate of the decision for pool, or NULL. */
static json_t *
cand(json_t *x, const char *pool)
{
	json_t	*a = json_object_get(json_object_get(x, "decision"),
	    "candidates"), *c;
	size_t	 i;

	json_array_foreach(a, i, c)
		if (strcmp(json_string_value(json_object_get(c, "pool")),
		    pool) == 0)
			return (c);
	return (NULL);
}

/*
 * What every scored explanation must hold: the winner first and chosen,
 * the grant's own pool; every other candidate lost on a rule the scorer
 * has; the deciding rule the closest loser's; losers ordered closest
 * first.
 */
static void
check_scored(json_t *x)
{
	json_t		*d = json_object_get(x, "decision");
	json_t		*a = json_object_get(d, "candidates"), *c;
	const char	*out;
	size_t		 i;
	int		 rank, last = 1000;

	cr_assert_str_eq(s_at(d, "how"), "scored");
	cr_assert_str_eq(s_at(d, "candidates.0.outcome"), "chosen");
	cr_assert_str_eq(s_at(d, "candidates.0.pool"), s_at(d, "pool"));
	cr_assert_str_eq(s_at(d, "pool"), s_at(x, "allocation.pool"));
	cr_assert_gt(json_array_size(a), 1);
	json_array_foreach(a, i, c) {
		if (i == 0)
			continue;
		out = json_string_value(json_object_get(c, "outcome"));
		cr_assert_eq(strncmp(out, "lost on ", 8), 0, "%s", out);
		rank = explain_rule_rank(out + 8);
		cr_assert_geq(rank, 0, "unknown rule \"%s\"", out + 8);
		cr_assert_leq(rank, last, "losers not closest first");
		last = rank;
		if (i == 1)
			cr_assert_str_eq(s_at(d, "rule"), out + 8);
	}
}

TestSuite(explain, .init = small, .fini = fini);

Test(explain, reserved_cpu_leaves_node_0_less_to_slice)
{
	json_t	*x;

	cr_assert_eq(env_create(&e, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	x = explain("g");
	check_scored(x);
	/* Node 0 has one CPU less to slice than the others: it lost on
	 * that; the others tie there and lose on the pool id. */
	cr_assert_str_eq(s_at(cand(x, "NUMA node #0"), "outcome"),
	    "lost on sliceable capacity");
	cr_assert_str_eq(s_at(x, "decision.rule"),
	    "sliceable capacity, pool id");
	cr_assert_str_eq(s_at(x, "request.qos"), "Guaranteed");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(x,
	    "request"), "exclusiveCPUs")), 2);
	/* Two whole CPUs of an empty node: a core's two threads. */
	cr_assert_str_eq(s_at(x, "allocation.pickedBy.0"), "idle cores");
	cr_assert_str_eq(s_at(x, "allocation.exclusive"),
	    s_at(x, "pinned.cpus"));
	json_decref(x);
}

Test(explain, a_full_node_loses_on_capacity)
{
	json_t		*x;
	const char	*full;
	char		*first;

	/* Three of node 1's four CPUs, then three more: only node 0 (three
	 * sliceable, CPU 0 reserved) and nodes 2, 3 have them. */
	cr_assert_eq(env_create(&e, "a", "G", 4000, 4000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	x = explain("a");
	first = xstrdup(s_at(x, "decision.pool"));
	json_decref(x);
	cr_assert_eq(env_create(&e, "b", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	x = explain("b");
	check_scored(x);
	full = first;
	cr_assert_str_eq(s_at(cand(x, full), "outcome"), "lost on capacity",
	    "%s is full", full);
	cr_assert_str_neq(s_at(x, "decision.pool"), full);
	json_decref(x);
	free(first);
}

/* A container of pod pod with annotations ann (NULL none). */
static int
create_in(const char *id, const char *pod, const char *aff)
{
	struct container_spec	s;
	struct policy_kv	ann[1];

	memset(&s, 0, sizeof s);
	s.id = id;
	s.name = id;
	s.pod = pod;
	s.pod_uid = pod;
	s.namespace = "default";
	s.qos = QOS_BURSTABLE;
	s.cpu_request = 500;
	s.cpu_limit = 1000;
	if (aff != NULL) {
		ann[0].key = (char *)AFFINITY_KEY;
		ann[0].value = (char *)aff;
		s.annotations = ann;
		s.nannotations = 1;
	}
	env_reset(&e);
	return (policy_create(e.P, &s, &e.fx, &e.cause));
}

Test(explain, affinity_pulls_to_the_first_container)
{
	json_t	*x;
	char	*home;

	cr_assert_eq(create_in("b", "p", NULL), 0, "%s", e.cause);
	x = explain("b");
	home = xstrdup(s_at(x, "decision.pool"));
	json_decref(x);
	cr_assert_eq(create_in("a", "p", "a: [b]"), 0, "%s", e.cause);
	x = explain("a");
	check_scored(x);
	cr_assert_str_eq(s_at(x, "decision.pool"), home);
	cr_assert_str_eq(s_at(x, "decision.rule"), "affinity");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    json_object_get(x, "request"), "annotations"), AFFINITY_KEY)),
	    "a: [b]", "the annotation as the policy read it");
	json_decref(x);
	free(home);
}

Test(explain, an_update_keeps_its_pool_and_says_what_placed_it)
{
	json_t	*x, *before;
	char	*was;

	cr_assert_eq(env_create(&e, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	before = explain("g");
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "g", 1000, 1000, -1, &e.fx,
	    &e.cause), 0, "%s", e.cause);
	x = explain("g");
	cr_assert_str_eq(s_at(x, "decision.how"), "kept");
	was = xstrdup(s_at(before, "decision.pool"));
	cr_assert_str_eq(s_at(x, "decision.pool"), was);
	/* The first placement, whole. */
	cr_assert(json_equal(json_object_get(json_object_get(x, "decision"),
	    "first"), json_object_get(before, "decision")));
	free(was);
	json_decref(x);
	json_decref(before);
}

Test(explain, an_undone_update_puts_the_old_decision_back)
{
	json_t	*before, *after;
	char	*a, *b;

	cr_assert_eq(env_create(&e, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	before = explain("g");
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "g", 3000, 3000, -1, &e.fx,
	    &e.cause), 0, "%s", e.cause);
	policy_undo(e.P, &e.fx);
	env_reset(&e);
	after = explain("g");
	a = json_dumps(before, JSON_SORT_KEYS);
	b = json_dumps(after, JSON_SORT_KEYS);
	cr_assert_str_eq(b, a);
	free(a);
	free(b);
	json_decref(before);
	json_decref(after);
}

Test(explain, reserved_namespace_takes_the_root)
{
	json_t	*x;

	cr_assert_eq(env_create(&e, "k", "BU", 100, 0, "kube-system", NULL,
	    NULL), 0, "%s", e.cause);
	x = explain("k");
	cr_assert_str_eq(s_at(x, "decision.how"), "root");
	cr_assert_str_eq(s_at(x, "request.type"), "reserved");
	cr_assert_str_eq(s_at(x, "allocation.pool"), s_at(x, "decision.pool"));
	json_decref(x);
}

Test(explain, claims_and_their_pinned_containers)
{
	json_t	*x;
	char	*list, *kv;

	cr_assert_eq(env_claim_for(&e, "u1", "cpudevnuma001=2", "w"), 0,
	    "%s", e.cause);
	x = explain("claim:u1");
	cr_assert_str_eq(s_at(x, "kind"), "claim");
	cr_assert_str_eq(s_at(x, "decision.how"), "claim");
	cr_assert_str_eq(s_at(x, "pickedBy.0"), "idle cores");
	cr_assert_str_eq(s_at(x, "consumers.0"), "w");
	json_decref(x);
	/* w (its own pod, a consumer) names the claim: pinned to it. */
	list = cpuset_format(policy_claim_cpus(e.P, "u1"));
	xasprintf(&kv, "DRA_CPUSET_u1=%s", list);
	cr_assert_eq(env_create(&e, "w", "G", 1000, 1000, NULL, NULL, kv), 0,
	    "%s", e.cause);
	free(list);
	free(kv);
	x = explain("w");
	cr_assert_str_eq(s_at(x, "allocation.pool"), "claims");
	cr_assert_str_eq(s_at(x, "decision.how"), "claims");
	cr_assert_str_eq(s_at(x, "claims.0"), "u1");
	json_decref(x);
	cr_assert_null(policy_explain(e.P, "claim:u2", &e.cause));
	cr_assert(strstr(e.cause, "u2") != NULL, "%s", e.cause);
	free(e.cause);
	e.cause = NULL;
	cr_assert_null(policy_explain(e.P, "nope", &e.cause));
	cr_assert(strstr(e.cause, "no container") != NULL, "%s", e.cause);
}

/*
 * A record names its candidates by the pool ids of the tree that was
 * weighed, through that tree's names, which it keeps: a reload replaces
 * the tree, and an undone one puts the grant back with its record, said
 * as before. Each pool weighed costs the record no more than its scores.
 */
Test(explain, the_weighed_tree_outlives_a_reload)
{
	const struct pool_tree	*old;
	struct grant		*g;
	json_t			*before, *x;
	char			*a, *b, *cause = NULL;

	cr_assert_eq(env_create(&e, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	g = strmap_get(e.P->ctrs, "g");
	cr_assert_leq(explain_size(g->why),
	    96 + 48 * (size_t)pool_tree_count(policy_tree(e.P)));
	before = explain("g");
	cr_assert_str_eq(s_at(before, "decision.how"), "scored");
	old = policy_tree(e.P);
	env_reset(&e);
	cr_assert_eq(policy_reconfigure(e.P, e.cfg, &e.fx, &cause), 0, "%s",
	    cause);
	cr_assert(policy_tree(e.P) != old, "the reload made a new tree");
	policy_undo(e.P, &e.fx);
	env_reset(&e);
	x = explain("g");
	a = json_dumps(before, JSON_SORT_KEYS);
	b = json_dumps(x, JSON_SORT_KEYS);
	cr_assert_str_eq(b, a);
	cr_assert_not_null(strstr(a, "\"NUMA node #"), "%s", a);
	free(a);
	free(b);
	json_decref(x);
	json_decref(before);
}

/* A restart keeps where grants are, not why; nor does a reload after
 * it make reasons up. */
Test(explain, a_restored_grant_has_no_reasons_kept)
{
	struct policy	*R = NULL;
	json_t		*doc, *x;
	char		*cause = NULL;

	cr_assert_eq(env_create(&e, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	doc = policy_save(e.P);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &cause), 0,
	    "%s", cause);
	x = policy_explain(R, "g", &cause);
	cr_assert_not_null(x, "%s", cause);
	/* Kept where it was, without what placed it there. */
	cr_assert_str_eq(s_at(x, "decision.how"), "unknown");
	json_decref(x);
	policy_effects_clear(&e.fx);
	cr_assert_eq(policy_reconfigure(R, e.cfg, &e.fx, &cause), 0, "%s",
	    cause);
	x = policy_explain(R, "g", &cause);
	cr_assert_str_eq(s_at(x, "decision.how"), "unknown",
	    "a reload that keeps the grant invents no reasons");
	json_decref(x);
	json_decref(doc);
	policy_free(R);
}

/* A machine with more pools than a record holds: the closest losers are
 * kept, the rest counted, and the record stays within its bound. */
Test(explain, bounded_on_a_big_tree, .init = NULL, .fini = NULL)
{
	struct env	 big;
	struct grant	*g;
	json_t		*x, *d, *om;
	char		*cause = NULL;
	size_t		 n;

	env_open_spec(&big, "packages=4,nodes=16,cores=2,threads=2", "{}");
	cr_assert_eq(env_create(&big, "g", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", big.cause);
	x = policy_explain(big.P, "g", &cause);
	cr_assert_not_null(x, "%s", cause);
	d = json_object_get(x, "decision");
	n = json_array_size(json_object_get(d, "candidates"));
	om = json_object_get(d, "omitted");
	cr_assert_not_null(om, "the tree has more pools than fit");
	cr_assert_eq(n + (size_t)json_integer_value(json_object_get(om,
	    "pools")), (size_t)pool_tree_count(policy_tree(big.P)));
	cr_assert_geq(explain_rule_rank(json_string_value(json_object_get(om,
	    "lostOnOrBefore"))), 0);
	g = strmap_get(big.P->ctrs, "g");
	cr_assert_leq(explain_size(g->why), EXPLAIN_MAX_BYTES);
	json_decref(x);
	env_close(&big);
}

static int
rank_of(const char *rule)
{
	int	r = explain_rule_rank(rule);

	return (r < 0 ? 1000 : r);
}

/*
 * The losers kept in order of the latest rule they lost on, then of pool
 * id, whatever rules the pools lost by: random rule lists over the tree,
 * checked against that order written plainly.
 */
Test(explain, losers_in_rule_then_pool_order)
{
	static const char *const names[] = { "capacity", "affinity", "depth",
	    "pool id", "shared capacity", "memory offer", "no such rule" };
	const struct pool_tree	*tree = policy_tree(e.P);
	const char		*why[POOLS_ON_STACK];
	struct score		 scores[POOLS_ON_STACK];
	struct explain		*x;
	json_t			*j, *cands;
	const char		*pool;
	int			 np = pool_tree_count(tree), round, i, k;
	int			 want[POOLS_ON_STACK], n, winner, rank, t;

	cr_assert_leq(np, POOLS_ON_STACK);
	cr_assert_geq(np, 4, "a tree with losers to order");
	memset(scores, 0, sizeof scores);
	srand48(3);
	for (round = 0; round < 200; round++) {
		winner = (int)(lrand48() % np);
		for (i = 0; i < np; i++)
			why[i] = names[lrand48() % 7];
		/* Selection by (rank descending, id ascending). */
		for (i = 0, n = 0; i < np; i++)
			if (i != winner)
				want[n++] = i;
		for (i = 0; i < n; i++)
			for (k = i + 1; k < n; k++) {
				/* An unknown rule is taken as the latest. */
				rank = rank_of(why[want[k]]);
				t = rank_of(why[want[i]]);
				if (rank > t || (rank == t && want[k] <
				    want[i])) {
					t = want[i];
					want[i] = want[k];
					want[k] = t;
				}
			}
		x = explain_scored(tree, winner, 0, scores, why);
		j = explain_json(x);
		cands = json_object_get(j, "candidates");
		cr_assert_eq(json_array_size(cands), (size_t)np);
		pool = json_string_value(json_object_get(json_array_get(cands,
		    0), "pool"));
		cr_assert_str_eq(pool, pool_tree_get(tree, winner)->name);
		for (i = 0; i < n; i++) {
			pool = json_string_value(json_object_get(
			    json_array_get(cands, (size_t)i + 1), "pool"));
			cr_assert_str_eq(pool, pool_tree_get(tree,
			    want[i])->name, "round %d, place %d", round, i);
		}
		json_decref(j);
		explain_unref(x);
	}
}

/* The priority capacities of every candidate of container id's placement
 * are its pool's sharable CPUs of each priority, less the request (a
 * BestEffort container asks 1 milli-CPU and takes no CPU of its own). */
static void
assert_priorities(struct env *v, const char *id)
{
	const struct cpuset	*hp, *lp, *np;
	const struct pool	*p;
	json_t			*x, *cands, *pr;
	char			*cause = NULL;
	size_t			 i;
	int			 want[3];

	hp = topology_kind_cpus(v->topo, CORE_KIND_PERF);
	lp = topology_kind_cpus(v->topo, CORE_KIND_EFFICIENT);
	if (cpuset_empty(hp))
		hp = topology_prio_cpus(v->topo, CPU_PRIO_HIGH);
	if (cpuset_empty(lp))
		lp = topology_prio_cpus(v->topo, CPU_PRIO_LOW);
	np = topology_prio_cpus(v->topo, CPU_PRIO_NORMAL);
	x = policy_explain(v->P, id, &cause);
	cr_assert_not_null(x, "%s", cause);
	cands = json_object_get(json_object_get(x, "decision"), "candidates");
	cr_assert_gt(json_array_size(cands), 1);
	for (i = 0; i < json_array_size(cands); i++) {
		p = pool_tree_find(policy_tree(v->P), json_string_value(
		    json_object_get(json_array_get(cands, i), "pool")));
		cr_assert_not_null(p);
		want[0] = 1000 * cpuset_and_count(hp,
		    &v->P->sup[p->id].sharable) - 1;
		want[1] = 1000 * cpuset_and_count(np,
		    &v->P->sup[p->id].sharable) - 1;
		want[2] = 1000 * cpuset_and_count(lp,
		    &v->P->sup[p->id].sharable) - 1;
		pr = json_object_get(json_array_get(cands, i), "priority");
		cr_assert_eq(json_integer_value(json_object_get(pr, "high")),
		    want[0], "%s", p->name);
		cr_assert_eq(json_integer_value(json_object_get(pr,
		    "normal")), want[1], "%s", p->name);
		cr_assert_eq(json_integer_value(json_object_get(pr, "low")),
		    want[2], "%s", p->name);
	}
	json_decref(x);
}

/* On a machine of one kind of CPU every CPU is of normal priority; on a
 * hybrid one P-cores count as high and E-cores as low. */
Test(explain, priority_capacities_of_every_candidate)
{
	struct env	 h;
	char		*dir;

	cr_assert_eq(env_create(&e, "be", "BE", -1, -1, NULL, NULL, NULL), 0,
	    "%s", e.cause);
	cr_assert(cpuset_empty(topology_prio_cpus(e.topo, CPU_PRIO_HIGH)));
	assert_priorities(&e, "be");
	dir = testlib_mksysfs("packages=2,nodes=2,cores=4,threads=2,"
	    "mem=2G,ecores=2,basefreq=2.7G,ebasefreq=1800M");
	env_open(&h, testlib_topology(dir), "{}");
	cr_assert_eq(env_create(&h, "be", "BE", -1, -1, NULL, NULL, NULL), 0,
	    "%s", h.cause);
	cr_assert_not(cpuset_empty(topology_kind_cpus(h.topo,
	    CORE_KIND_EFFICIENT)));
	cr_assert_not(cpuset_empty(topology_prio_cpus(h.topo, CPU_PRIO_LOW)),
	    "the E-cores are of low priority");
	assert_priorities(&h, "be");
	env_close(&h);
	free(dir);
}
