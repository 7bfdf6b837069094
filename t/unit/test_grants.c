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
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "textbuf.h"
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

static void
assert_default_mems(const struct cpuset *mems)
{
	int	dram = cpuset_first(mems), near = 1000, k, d;

	cr_assert_lt(dram, 4, "no DRAM node");
	for (k = 4; k < 6; k++)
		if ((d = topology_node_distance(e.topo, dram, k)) < near)
			near = d;
	for (k = 0; k < 6; k++)
		cr_assert_eq(cpuset_has(mems, k), k == dram || (k >= 4 &&
		    topology_node_distance(e.topo, dram, k) == near),
		    "node %d in the memory of a pool of node %d", k, dram);
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
	/* Memory: Go's default types, DRAM and PMEM: the pool's DRAM node
	 * and the PMEM nodes (4 and 5) nearest to it. */
	assert_default_mems(&e.fx.self.mems);
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
	cr_assert_eq(policy_update(e.P, "u", 4000, 4000, -1, &e.fx, &e.cause), 0,
	    "%s", e.cause);
	cr_assert_eq(cpuset_count(&e.fx.self.cpus), 4);
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "nope", 1000, 1000, -1, &e.fx, &e.cause),
	    0);
	/* An update that cannot fit leaves the old grant. */
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "u", 200000, 200000, -1, &e.fx,
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

	cr_assert_eq(env_claim_for(&e, "uid-1", "cpudevnuma001=2", "p,f,g,d"), 0,
	    "%s", e.cause);
	snprintf(env, sizeof env, "DRA_CPUSET_uid-1=1,57");
	create("p", "BE", -1, -1, NULL, NULL, env);
	assert_cpus("p", "1,57");
	/* The DRAM node of those CPUs and, by the default memory types,
	 * the PMEM nodes nearest it, as for a container of that node. */
	assert_default_mems(&e.fx.self.mems);
	cr_assert_eq(cpuset_first(&e.fx.self.mems), 1);
	/* Asked for DRAM only, DRAM only. */
	create("d", "BE", -1, -1, NULL,
	    "memory-type.resource-policy.nri.io/container.d=dram",
	    "DRA_CPUSET_uid-1=1,57");
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
	cr_assert_eq(json_integer_value(json_object_get(doc, "version")), 3);
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
	restore_refused("{\"version\":4,\"grants\":{}}", "newer");
	restore_refused("{\"version\":0,\"grants\":{}}", "version 0");
	restore_refused("{\"version\":\"1\",\"grants\":{}}",
	    "not an integer");
	/* Not "bad version 1": what is wrong is grants. */
	restore_refused("{\"version\":1,\"grants\":[]}",
	    "\"grants\" is an array, not an object");
	/* Claim keys follow the rule of claim UIDs from the kubelet. */
	restore_refused("{\"version\":2,\"grants\":{\"claim:../../x\":{"
	    "\"kind\":\"claim\",\"cpus\":\"1\",\"pool\":\"root\"}}}",
	    "claim UID");
	restore_refused("{\"version\":2,\"grants\":{\"claim:a/b\":{"
	    "\"kind\":\"claim\",\"cpus\":\"1\",\"pool\":\"root\"}}}",
	    "claim UID");
	restore_refused("{\"version\":2,\"grants\":{\"claim:a\":{"
	    "\"kind\":\"claim\",\"cpus\":\"1\",\"pool\":\"root\","
	    "\"consumers\":\"p\"}}}", "consumers");
	restore_refused("{\"version\":2,\"grants\":{\"claim:a\":{"
	    "\"kind\":\"claim\",\"cpus\":\"1\",\"pool\":\"root\","
	    "\"consumers\":[\"a b\"]}}}", "not a pod UID");
	restore_refused("{\"version\":2,\"grants\":{\"..\":{\"kind\":"
	    "\"container\"}}}", "\"..\"");
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

/*
 * The state as text (policy_save_text): it must load, duplicate keys
 * refused as the state file reader refuses them, to what policy_save
 * gives, and restore to the same policy. Dumped by jansson, policy_save's
 * document is the same bytes, which checks key order and escapes too.
 */

static char *
check_text(struct policy *P, int identical)
{
	json_t		*doc, *ref, *again;
	json_error_t	 err;
	struct policy	*R = NULL;
	char		*text, *dumped, *text2;
	size_t		 len;

	text = policy_save_text(P, &len);
	cr_assert_not_null(text);
	cr_assert_eq(len, strlen(text));
	cr_assert(len > 0 && text[len - 1] == '\n', "no newline: %s", text);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	cr_assert_not_null(doc, "%s: %s", err.text, text);
	ref = policy_save(P);
	cr_assert(json_equal(doc, ref), "text %s differs from the values",
	    text);
	if (identical) {
		dumped = json_dumps(ref, JSON_COMPACT);
		cr_assert_eq(strncmp(text, dumped, len - 1), 0,
		    "\n%s\n%s", text, dumped);
		cr_assert_eq(strlen(dumped), len - 1);
		free(dumped);
	}
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0,
	    "%s: %s", e.cause, text);
	again = policy_save(R);
	cr_assert(json_equal(again, ref), "restore changed the state");
	text2 = policy_save_text(R, NULL);
	cr_assert_str_eq(text2, text);
	free(text2);
	json_decref(again);
	policy_free(R);
	json_decref(ref);
	json_decref(doc);
	return (text);
}

/* What affinities match: the pod's name, the container's and the pod's
 * labels. */
struct meta {
	const char		*pod_name;
	const struct policy_kv	*labels;
	int			 nlabels;
	const struct policy_kv	*pod_labels;
	int			 npod_labels;
};

/* A container with every field given (NULL: absent). */
static int
create_full(const char *id, enum qos_class qos, long long req, long long lim,
    const char *name, const char *pod, const char *ns,
    const struct policy_kv *ann, int nann, const struct policy_kv *env,
    int nenv, const struct meta *m)
{
	struct container_spec	s;

	env_reset(&e);
	memset(&s, 0, sizeof s);
	s.id = id;
	s.name = name;
	s.pod = pod;
	s.pod_uid = pod;
	s.namespace = ns;
	s.qos = qos;
	s.cpu_request = req;
	s.cpu_limit = lim;
	s.annotations = ann;
	s.nannotations = nann;
	s.env = env;
	s.nenv = nenv;
	if (m != NULL) {
		s.pod_name = m->pod_name;
		s.labels = m->labels;
		s.nlabels = m->nlabels;
		s.pod_labels = m->pod_labels;
		s.npod_labels = m->npod_labels;
	}
	return (policy_create(e.P, &s, &e.fx, &e.cause));
}

/* Every byte from 1 to 127, then some UTF-8 of two, three and four bytes. */
static char *
all_bytes(void)
{
	char	*s = xmalloc(160), *p = s;
	int	 c;

	for (c = 1; c < 128; c++)
		*p++ = (char)c;
	strcpy(p, "\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80/\\u0041");
	return (s);
}

Test(grants, state_text_escapes_every_byte)
{
	struct policy_kv	 ann[2], env[1];
	json_t			*doc, *spec;
	const char		*name;
	char			*bytes = all_bytes(), *text, *key;

	xasprintf(&key, "x.resource-policy.nri.io/%s", bytes);
	ann[0].key = key;
	ann[0].value = bytes;
	ann[1].key = (char *)"prefer-isolated-cpus.resource-policy.nri.io";
	ann[1].value = (char *)"\"true\"";
	env[0].key = (char *)"DRA_CPUSET_\t\"x\"";
	env[0].value = bytes;
	cr_assert_eq(create_full("c/<1>'{}", QOS_GUARANTEED, 2000, 2000, bytes,
	    "pod\\1", "ns\n", ann, 2, env, 1, NULL), 0, "%s", e.cause);
	text = check_text(e.P, 1);
	/* What the text says, read independently of policy_save. */
	doc = json_loads(text, 0, NULL);
	spec = json_object_get(json_object_get(json_object_get(doc, "grants"),
	    "c/<1>'{}"), "container");
	/* A name is kept up to POLICY_MAX_NAME bytes of text. */
	name = json_string_value(json_object_get(spec, "name"));
	cr_assert_lt(strlen(name), strlen(bytes));
	cr_assert_eq(strncmp(name, bytes, strlen(name)), 0);
	cr_assert_leq(tb_esc_len(name, SIZE_MAX, NULL), POLICY_MAX_NAME);
	cr_assert_gt(tb_esc_len(name, SIZE_MAX, NULL), POLICY_MAX_NAME - 6);
	cr_assert_str_eq(json_string_value(json_object_get(spec, "pod")),
	    "pod\\1");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "namespace")),
	    "ns\n");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "annotations"), key)), bytes);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "env"), "DRA_CPUSET_\t\"x\"")), bytes);
	/* Control characters are escaped: the text is one line. */
	cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1);
	cr_assert_not_null(strstr(text, "\\u0001\\u0002"));
	cr_assert_not_null(strstr(text, "\\b\\t\\n\\u000B\\f\\r"));
	json_decref(doc);
	free(text);
	free(key);
	free(bytes);
}

/*
 * Protobuf passes strings that are not UTF-8, which JSON cannot hold: the
 * policy keeps each bad byte as U+FFFD, so both documents carry it and the
 * state restores to what was held.
 */
Test(grants, state_text_not_utf8)
{
	struct policy_kv	 ann[2], env[1];
	json_t			*doc, *spec, *a;
	char			*text;

	ann[0].key = (char *)"x.resource-policy.nri.io/\xff";
	ann[0].value = (char *)"\xfe\xc3";
	/* Overlong; a surrogate. */
	ann[1].key = (char *)"y.resource-policy.nri.io";
	ann[1].value = (char *)"\xc0\x80|\xed\xa0\x80|";
	env[0].key = (char *)"DRA_CPUSET_u";
	/* Past U+10FFFF; cut short; then good. */
	env[0].value = (char *)"\xf4\x90\x80\x80|\xe2\x82|\xe2\x82\xac";
	cr_assert_eq(create_full("bad", QOS_BURSTABLE, 100, -1, "n\xc3(x",
	    "\x80", "ns\xf8", ann, 2, env, 1, NULL), 0, "%s", e.cause);
	text = check_text(e.P, 1);
	doc = json_loads(text, 0, NULL);
	spec = json_object_get(json_object_get(json_object_get(doc, "grants"),
	    "bad"), "container");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "name")),
	    "n\xef\xbf\xbd(x");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "pod")),
	    "\xef\xbf\xbd");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "namespace")),
	    "ns\xef\xbf\xbd");
	a = json_object_get(spec, "annotations");
	cr_assert_eq(json_object_size(a), 2);
	cr_assert_str_eq(json_string_value(json_object_get(a,
	    "x.resource-policy.nri.io/\xef\xbf\xbd")), "\xef\xbf\xbd\xef\xbf\xbd");
	cr_assert_str_eq(json_string_value(json_object_get(a,
	    "y.resource-policy.nri.io")), "\xef\xbf\xbd\xef\xbf\xbd|"
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "env"), "DRA_CPUSET_u")), "\xef\xbf\xbd\xef\xbf\xbd"
	    "\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xe2\x82\xac");
	json_decref(doc);
	free(text);
}

/* A key given twice keeps its last value and is written once. */
Test(grants, state_text_duplicate_keys)
{
	struct policy_kv	 ann[3], env[3];
	json_t			*doc, *spec;
	char			*text;

	ann[0].key = (char *)"a.resource-policy.nri.io";
	ann[0].value = (char *)"first";
	ann[1].key = (char *)"b.resource-policy.nri.io";
	ann[1].value = (char *)"b";
	ann[2].key = (char *)"a.resource-policy.nri.io";
	ann[2].value = (char *)"last";
	env[0].key = (char *)"DRA_CPUSET_x";
	env[0].value = (char *)"1";
	env[1].key = (char *)"DRA_CPUSET_x";
	env[1].value = (char *)"2";
	env[2].key = (char *)"DRA_CPUSET_x";
	env[2].value = (char *)"3";
	cr_assert_eq(create_full("dup", QOS_BESTEFFORT, -1, -1, NULL, NULL,
	    NULL, ann, 3, env, 3, NULL), 0, "%s", e.cause);
	text = check_text(e.P, 1);
	doc = json_loads(text, 0, NULL);
	spec = json_object_get(json_object_get(json_object_get(doc, "grants"),
	    "dup"), "container");
	cr_assert_eq(json_object_size(json_object_get(spec, "annotations")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "annotations"), "a.resource-policy.nri.io")), "last");
	cr_assert_eq(json_object_size(json_object_get(spec, "env")), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "env"), "DRA_CPUSET_x")), "3");
	cr_assert_null(json_object_get(spec, "name"));
	json_decref(doc);
	free(text);
}

static json_t	*saved_spec(json_t *, const char *);

/* Many entries (past the few compared in place): the same holds. */
Test(grants, state_text_duplicate_keys_of_many)
{
	struct policy_kv	 ann[20];
	char			 keys[20][48], vals[20][8];
	json_t			*doc, *a;
	char			*text;
	int			 i;

	for (i = 0; i < 20; i++) {
		/* The last two say again the first and the tenth. */
		snprintf(keys[i], sizeof keys[i], "k%d.resource-policy.nri.io",
		    i == 18 ? 0 : i == 19 ? 9 : i);
		snprintf(vals[i], sizeof vals[i], "v%d", i);
		ann[i].key = keys[i];
		ann[i].value = vals[i];
	}
	cr_assert_eq(create_full("many", QOS_BESTEFFORT, -1, -1, NULL, NULL,
	    NULL, ann, 20, NULL, 0, NULL), 0, "%s", e.cause);
	text = check_text(e.P, 1);
	doc = json_loads(text, 0, NULL);
	a = json_object_get(saved_spec(doc, "many"), "annotations");
	cr_assert_eq(json_object_size(a), 18);
	cr_assert_str_eq(json_string_value(json_object_get(a,
	    "k0.resource-policy.nri.io")), "v18");
	cr_assert_str_eq(json_string_value(json_object_get(a,
	    "k9.resource-policy.nri.io")), "v19");
	cr_assert_str_eq(json_string_value(json_object_get(a,
	    "k17.resource-policy.nri.io")), "v17");
	json_decref(doc);
	free(text);
}

/* The saved container spec of id in the state text. */
static json_t *
saved_spec(json_t *doc, const char *id)
{
	return (json_object_get(json_object_get(json_object_get(doc,
	    "grants"), id), "container"));
}

/*
 * What affinities match (the pod's name, the container's and the pod's
 * labels) is saved, escaped and cleaned like the rest, kept through an
 * update, and read back by a restart; a container without any saves none
 * of the keys, as before they were kept.
 */
Test(grants, pod_name_and_labels_survive_a_restart)
{
	struct policy_kv	 lab[4], plab[2], *all;
	struct meta		 m;
	struct grant		*g;
	struct policy		*R = NULL;
	json_t			*doc, *spec;
	char			*text;
	int			 n;

	lab[0].key = (char *)"app";
	lab[0].value = (char *)"web";
	lab[1].key = (char *)"io.kubernetes.container.name";
	lab[1].value = (char *)"c";
	lab[2].key = (char *)"tier\t\"q\"";
	lab[2].value = (char *)"front\n\\";
	lab[3].key = (char *)"bad\xff";
	lab[3].value = (char *)"v\xfe";
	plab[0].key = (char *)"app";
	plab[0].value = (char *)"web-pod";
	plab[1].key = (char *)"pod-template-hash";
	plab[1].value = (char *)"";
	memset(&m, 0, sizeof m);
	m.pod_name = "web-0";
	m.labels = lab;
	m.nlabels = 4;
	m.pod_labels = plab;
	m.npod_labels = 2;
	cr_assert_eq(create_full("web", QOS_GUARANTEED, 2000, 2000, "c",
	    "pod-web", "default", NULL, 0, NULL, 0, &m), 0, "%s", e.cause);
	cr_assert_eq(e.fx.nwarnings, 0);
	cr_assert_eq(create_full("plain", QOS_BESTEFFORT, -1, -1, "c", "p",
	    "default", NULL, 0, NULL, 0, NULL), 0, "%s", e.cause);
	/* An update copies the grant's spec: the labels go with it. */
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "web", 3000, 3000, -1, &e.fx, &e.cause), 0,
	    "%s", e.cause);

	text = check_text(e.P, 1);
	doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	cr_assert_not_null(doc, "%s", text);
	spec = saved_spec(doc, "web");
	cr_assert_str_eq(json_string_value(json_object_get(spec, "podName")),
	    "web-0");
	/* The kubelet's label that copies the name is a bit, not a
	 * string: 3 labels and kubeLabels. */
	cr_assert_eq(json_object_size(json_object_get(spec, "labels")), 3,
	    "%s", text);
	cr_assert_null(json_object_get(json_object_get(spec, "labels"),
	    "io.kubernetes.container.name"), "%s", text);
	cr_assert_eq(json_integer_value(json_object_get(spec, "kubeLabels")),
	    1 << expr_kube_label("io.kubernetes.container.name"), "%s", text);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "labels"), "tier\t\"q\"")), "front\n\\");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "labels"), "bad\xef\xbf\xbd")), "v\xef\xbf\xbd");
	cr_assert_eq(json_object_size(json_object_get(spec, "podLabels")), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "podLabels"), "pod-template-hash")), "");
	spec = saved_spec(doc, "plain");
	cr_assert_not_null(spec, "%s", text);
	cr_assert_null(json_object_get(spec, "podName"));
	cr_assert_null(json_object_get(spec, "labels"));
	cr_assert_null(json_object_get(spec, "podLabels"));

	/* The restored policy holds them, not only its saved text. */
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	g = strmap_get(R->ctrs, "web");
	cr_assert_not_null(g);
	cr_assert_str_eq(g->spec.pod_name, "web-0");
	/* The kubelet's label that copies the name is kept as a bit. */
	cr_assert_eq(g->spec.nlabels, 3);
	cr_assert_eq(g->spec.kube_labels,
	    1u << expr_kube_label("io.kubernetes.container.name"));
	cr_assert_str_eq(policy_kv_get(g->spec.labels, g->spec.nlabels, "app"),
	    "web");
	all = cspec_labels(&g->spec, &n);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(policy_kv_get(all, n, "io.kubernetes.container.name"),
	    "c");
	free(all);
	cr_assert_eq(g->spec.npod_labels, 2);
	cr_assert_str_eq(policy_kv_get(g->spec.pod_labels, g->spec.npod_labels,
	    "app"), "web-pod");
	g = strmap_get(R->ctrs, "plain");
	cr_assert_not_null(g);
	cr_assert_null(g->spec.pod_name);
	cr_assert_eq(g->spec.nlabels, 0);
	cr_assert_eq(g->spec.npod_labels, 0);
	policy_free(R);
	json_decref(doc);
	free(text);
}

/*
 * Labels past the caps (entries, then bytes of keys and values, each set
 * on its own) are dropped and counted in the one warning of the create,
 * with the annotations past theirs; the container is still placed.
 */
Test(grants, labels_past_the_caps_are_dropped_with_a_warning)
{
	struct policy_kv	 lab[POLICY_MAX_LABELS + 6], plab[3], ann[1];
	struct meta		 m;
	struct grant		*g;
	json_t			*doc;
	char			*keys[POLICY_MAX_LABELS + 6], *big[3], *text;
	char			 name[16];
	int			 i;

	for (i = 0; i < POLICY_MAX_LABELS + 6; i++) {
		xasprintf(&keys[i], "k%d", i);
		lab[i].key = keys[i];
		lab[i].value = (char *)"v";
	}
	/* Two fit in the bytes of a set, the third does not. */
	for (i = 0; i < 3; i++) {
		big[i] = xmalloc(POLICY_MAX_LABEL_BYTES / 3 + 1);
		memset(big[i], 'a' + i, POLICY_MAX_LABEL_BYTES / 3);
		big[i][POLICY_MAX_LABEL_BYTES / 3] = '\0';
		snprintf(name, sizeof name, "big%d", i);
		plab[i].key = xstrdup(name);
		plab[i].value = big[i];
	}
	/* Repeating a kept key takes no room. */
	ann[0].key = (char *)"x.resource-policy.nri.io";
	ann[0].value = (char *)"1";
	memset(&m, 0, sizeof m);
	m.labels = lab;
	m.nlabels = POLICY_MAX_LABELS + 6;
	m.pod_labels = plab;
	m.npod_labels = 3;
	cr_assert_eq(create_full("big", QOS_BURSTABLE, 500, 1000, "c", "p",
	    "default", ann, 1, NULL, 0, &m), 0, "%s", e.cause);
	cr_assert_eq(e.fx.nwarnings, 1);
	cr_assert_not_null(strstr(e.fx.warnings[0], "big"), "%s",
	    e.fx.warnings[0]);
	/* 6 labels past the count, 1 pod label past the bytes. */
	cr_assert_not_null(strstr(e.fx.warnings[0], ": 7 "), "%s",
	    e.fx.warnings[0]);

	g = strmap_get(e.P->ctrs, "big");
	cr_assert_not_null(g);
	cr_assert_eq(g->spec.nlabels, POLICY_MAX_LABELS);
	cr_assert_str_eq(policy_kv_get(g->spec.labels, g->spec.nlabels,
	    "k0"), "v");
	cr_assert_not_null(policy_kv_get(g->spec.labels, g->spec.nlabels,
	    "k63"));
	cr_assert_null(policy_kv_get(g->spec.labels, g->spec.nlabels, "k64"));
	cr_assert_eq(g->spec.npod_labels, 2);
	cr_assert_null(policy_kv_get(g->spec.pod_labels, g->spec.npod_labels,
	    "big2"));
	cr_assert_eq(g->spec.nann, 1);

	/* What is kept is what is saved. */
	text = check_text(e.P, 1);
	doc = json_loads(text, 0, NULL);
	cr_assert_eq(json_object_size(json_object_get(saved_spec(doc, "big"),
	    "labels")), POLICY_MAX_LABELS);
	json_decref(doc);
	free(text);

	/* Within the caps, no warning. */
	m.nlabels = POLICY_MAX_LABELS;
	m.npod_labels = 2;
	cr_assert_eq(create_full("fits", QOS_BESTEFFORT, -1, -1, "c", "p",
	    "default", NULL, 0, NULL, 0, &m), 0, "%s", e.cause);
	cr_assert_eq(e.fx.nwarnings, 0, "%s", e.fx.nwarnings ?
	    e.fx.warnings[0] : "");
	for (i = 0; i < POLICY_MAX_LABELS + 6; i++)
		free(keys[i]);
	for (i = 0; i < 3; i++) {
		free(plab[i].key);
		free(big[i]);
	}
}

/*
 * Keys that differ only in bytes that are not UTF-8 are one key once
 * cleaned: kept once, with the last value, so that the state file (which
 * refuses duplicate keys) can be read back, and taking one place under
 * the caps.
 */
Test(grants, keys_alike_once_cleaned_are_kept_once)
{
	struct policy_kv	 lab[POLICY_MAX_LABELS + 1], ann[2];
	struct meta		 m;
	json_t			*doc, *spec;
	char			*keys[POLICY_MAX_LABELS + 1], *text;
	int			 i;

	/* POLICY_MAX_LABELS + 1 keys as given, POLICY_MAX_LABELS cleaned. */
	lab[0].key = (char *)"a\xff";
	lab[0].value = (char *)"first";
	lab[1].key = (char *)"a\xfe";
	lab[1].value = (char *)"last";
	for (i = 2; i < POLICY_MAX_LABELS + 1; i++) {
		xasprintf(&keys[i], "k%d", i);
		lab[i].key = keys[i];
		lab[i].value = (char *)"v";
	}
	ann[0].key = (char *)"x.resource-policy.nri.io/\xff";
	ann[0].value = (char *)"1";
	ann[1].key = (char *)"x.resource-policy.nri.io/\xfe";
	ann[1].value = (char *)"2";
	memset(&m, 0, sizeof m);
	m.labels = lab;
	m.nlabels = POLICY_MAX_LABELS + 1;
	cr_assert_eq(create_full("alike", QOS_BESTEFFORT, -1, -1, NULL, NULL,
	    NULL, ann, 2, NULL, 0, &m), 0, "%s", e.cause);
	cr_assert_eq(e.fx.nwarnings, 0, "%s", e.fx.nwarnings ?
	    e.fx.warnings[0] : "");
	text = check_text(e.P, 1);
	doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	cr_assert_not_null(doc, "%s", text);
	spec = saved_spec(doc, "alike");
	cr_assert_eq(json_object_size(json_object_get(spec, "labels")),
	    POLICY_MAX_LABELS);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	    spec, "labels"), "a\xef\xbf\xbd")), "last");
	cr_assert_not_null(json_object_get(json_object_get(spec, "labels"),
	    "k64"));
	cr_assert_eq(json_object_size(json_object_get(spec, "annotations")),
	    1);
	json_decref(doc);
	free(text);
	for (i = 2; i < POLICY_MAX_LABELS + 1; i++)
		free(keys[i]);
}

/* A shared container as a state saved before pod names and labels were
 * kept; extra is spliced into its container spec. */
static char *
old_state(const char *extra)
{
	char	*text;

	xasprintf(&text, "{\"version\":2,\"grants\":{\"old\":{\"kind\":"
	    "\"container\",\"pool\":\"root\",\"type\":\"normal\","
	    "\"exclusive\":\"\",\"portion\":0,\"zeroRequest\":true,"
	    "\"fallback\":false,\"container\":{\"qos\":\"BestEffort\","
	    "\"cpuRequest\":-1,\"cpuLimit\":-1,\"annotations\":{},\"env\":{},"
	    "\"name\":\"c\",\"pod\":\"p\",\"namespace\":\"default\","
	    "\"podUID\":\"u\"%s}}}}", extra);
	return (text);
}

static struct policy *
restore_text(const char *text)
{
	struct policy	*R = NULL;
	json_t		*doc;

	doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	cr_assert_not_null(doc, "%s", text);
	env_reset(&e);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0,
	    "%s: %s", e.cause, text);
	json_decref(doc);
	return (R);
}

/*
 * A state without the keys loads (they are optional), and writes the
 * same; with them they are read; a key of the wrong type is refused,
 * named, as the other keys are.
 */
Test(grants, older_state_without_labels_loads)
{
	static const struct {
		const char	*extra;
		const char	*cause;
	} bad[] = {
		{ ",\"labels\":3", "labels" },
		{ ",\"labels\":[\"a\"]", "labels" },
		{ ",\"podLabels\":{\"a\":1}", "podLabels" },
		{ ",\"podName\":3", "malformed" },
		{ ",\"podname\":\"x\"", "malformed" },
		{ ",\"kubeLabels\":\"1\"", "kubeLabels" },
		{ ",\"kubeLabels\":0", "kubeLabels" },
		{ ",\"kubeLabels\":16", "kubeLabels" },
	};
	struct policy	*R;
	struct grant	*g;
	struct policy_kv *all;
	char		*text, *again;
	size_t		 i;
	int		 n;

	text = old_state("");
	R = restore_text(text);
	g = strmap_get(R->ctrs, "old");
	cr_assert_not_null(g);
	cr_assert_null(g->spec.pod_name);
	cr_assert_eq(g->spec.nlabels, 0);
	cr_assert_eq(g->spec.npod_labels, 0);
	again = policy_save_text(R, NULL);
	cr_assert_str_eq(again, "{\"version\":3,\"grants\":{\"old\":{"
	    "\"kind\":\"container\",\"pool\":\"root\",\"type\":\"normal\","
	    "\"exclusive\":\"\",\"portion\":0,\"zeroRequest\":true,"
	    "\"fallback\":false,\"container\":{\"qos\":\"BestEffort\","
	    "\"cpuRequest\":-1,\"cpuLimit\":-1,\"annotations\":{},\"env\":{},"
	    "\"name\":\"c\",\"pod\":\"p\",\"namespace\":\"default\","
	    "\"podUID\":\"u\"},"
	    /* Accounted again: BestEffort asks for no memory, from every
	     * DRAM and PMEM node of the root pool (nodes 0-3 and 4-5). */
	    "\"memory\":{\"bytes\":0,\"nodes\":\"0-5\"}}}}\n");
	free(again);
	policy_free(R);
	free(text);

	text = old_state(",\"podName\":\"pn\",\"labels\":{\"a\":\"1\"},"
	    "\"podLabels\":{\"b\":\"2\",\"c\":\"3\"}");
	R = restore_text(text);
	g = strmap_get(R->ctrs, "old");
	cr_assert_not_null(g);
	cr_assert_str_eq(g->spec.pod_name, "pn");
	cr_assert_eq(g->spec.nlabels, 1);
	cr_assert_str_eq(policy_kv_get(g->spec.labels, 1, "a"), "1");
	cr_assert_eq(g->spec.npod_labels, 2);
	cr_assert_str_eq(policy_kv_get(g->spec.pod_labels, 2, "c"), "3");
	policy_free(R);
	free(text);

	/* Version 2 wrote the kubelet's labels as strings; they are read
	 * as the bits version 3 writes, which read back the same. */
	text = old_state(",\"podName\":\"pn\",\"labels\":{\"a\":\"1\","
	    "\"io.kubernetes.container.name\":\"c\","
	    "\"io.kubernetes.pod.name\":\"pn\","
	    "\"io.kubernetes.pod.namespace\":\"default\","
	    "\"io.kubernetes.pod.uid\":\"u\"}");
	R = restore_text(text);
	g = strmap_get(R->ctrs, "old");
	cr_assert_eq(g->spec.nlabels, 1);
	cr_assert_eq(g->spec.kube_labels, 15);
	again = policy_save_text(R, NULL);
	cr_assert_not_null(strstr(again, "\"podName\":\"pn\","
	    "\"labels\":{\"a\":\"1\"},\"kubeLabels\":15}"), "%s", again);
	policy_free(R);
	free(text);
	R = restore_text(again);
	g = strmap_get(R->ctrs, "old");
	cr_assert_eq(g->spec.kube_labels, 15);
	all = cspec_labels(&g->spec, &n);
	cr_assert_eq(n, 5);
	cr_assert_str_eq(policy_kv_get(all, n, "io.kubernetes.pod.name"), "pn");
	cr_assert_str_eq(policy_kv_get(all, n, "io.kubernetes.pod.uid"), "u");
	cr_assert_str_eq(policy_kv_get(all, n, "io.kubernetes.pod.namespace"),
	    "default");
	free(all);
	text = policy_save_text(R, NULL);
	cr_assert_str_eq(text, again);
	free(again);
	policy_free(R);
	free(text);

	/* A bit whose field the container lacks (it has no pod name), or
	 * that a label gives otherwise, is dropped, not the state. */
	text = old_state(",\"labels\":{\"io.kubernetes.container.name\":"
	    "\"d\"},\"kubeLabels\":7");
	R = restore_text(text);
	g = strmap_get(R->ctrs, "old");
	cr_assert_eq(g->spec.kube_labels, 4, "%u", g->spec.kube_labels);
	cr_assert_str_eq(policy_kv_get(g->spec.labels, g->spec.nlabels,
	    "io.kubernetes.container.name"), "d");
	policy_free(R);
	free(text);

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		text = old_state(bad[i].extra);
		restore_refused(text, bad[i].cause);
		free(text);
	}
}

/* Claims, claim-pinned containers and fallbacks, by hand. */
Test(grants, state_text_every_kind)
{
	struct container_spec	 specs[3];
	struct policy_kv	 env[1];
	char			*text, *cpus, *kv;
	json_t			*doc, *g;

	text = check_text(e.P, 1);
	cr_assert_str_eq(text, "{\"version\":3,\"grants\":{}}\n");
	free(text);
	cr_assert_eq(env_claim_for(&e, "k1", "cpudevnuma001=2", "pinned"), 0,
	    "%s", e.cause);
	cr_assert_eq(env_claim(&e, "k2", "cpudevnuma000=2,cpudevnuma002=3"), 0,
	    "%s", e.cause);
	cpus = cpuset_format(policy_claim_cpus(e.P, "k1"));
	xasprintf(&kv, "DRA_CPUSET_k1=%s", cpus);
	create("pinned", "BE", -1, -1, NULL, NULL, kv);
	create("iso", "G", 1000, 1000, NULL,
	    "prefer-isolated-cpus.resource-policy.nri.io=true", NULL);
	create("rsv", "BU", 250, 500, "kube-system", NULL, NULL);
	create("shared", "G", 1500, 1500, NULL, NULL, NULL);

	/* A sync with one that cannot fit: it falls back to the root pool. */
	memset(specs, 0, sizeof specs);
	specs[0].id = "pinned";
	specs[0].qos = QOS_BESTEFFORT;
	specs[0].cpu_request = specs[0].cpu_limit = -1;
	env[0].key = (char *)"DRA_CPUSET_k1";
	env[0].value = cpus;
	specs[0].env = env;
	specs[0].nenv = 1;
	specs[1].id = "huge";
	specs[1].qos = QOS_GUARANTEED;
	specs[1].cpu_request = specs[1].cpu_limit = 500000;
	specs[2].id = "iso";
	specs[2].qos = QOS_GUARANTEED;
	specs[2].cpu_request = specs[2].cpu_limit = 1000;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, specs, 3, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	text = check_text(e.P, 1);
	doc = json_loads(text, 0, NULL);
	g = json_object_get(doc, "grants");
	cr_assert_eq(json_object_size(g), 5);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(g,
	    "pinned"), "kind")), "claim-pinned");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(
	    json_object_get(g, "pinned"), "claims"), 0)), "k1");
	cr_assert(json_is_true(json_object_get(json_object_get(g, "huge"),
	    "fallback")));
	cr_assert(json_is_false(json_object_get(json_object_get(g, "iso"),
	    "fallback")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(g,
	    "claim:k1"), "cpus")), cpus);
	free(cpus);
	cpus = cpuset_format(policy_claim_cpus(e.P, "k2"));
	cr_assert_eq(strlen(cpus) > 2, 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(g,
	    "claim:k2"), "cpus")), cpus);
	json_decref(doc);
	free(text);
	free(kv);
	free(cpus);
}

/*
 * A container id that starts like a claim's key would be read back as a
 * claim after a restart (and fail it): refused, nothing granted.
 */
Test(grants, container_named_like_a_claim_is_refused)
{
	char	*before, *after;

	cr_assert_eq(env_claim(&e, "k", "cpudevnuma001=2"), 0, "%s", e.cause);
	before = policy_save_text(e.P, NULL);
	cr_assert_eq(env_create(&e, "claim:k", "BE", -1, -1, NULL, NULL,
	    NULL), -EINVAL);
	cr_assert(strstr(e.cause, "claim:") != NULL, "%s", e.cause);
	cr_assert_eq(env_create(&e, "claim:none", "BE", -1, -1, NULL, NULL,
	    NULL), -EINVAL);
	after = policy_save_text(e.P, NULL);
	cr_assert_str_eq(after, before);
	cr_assert_eq(policy_ncontainers(e.P), 0);
	free(before);
	free(after);
}

/* Names and values the random walk draws from; some need escapes. */
static const char *walk_names[] = { "a", "b\"q\"", "c\\d", "\xc3\xa9t\xc3\xa9",
    "tab\there", "\x01\x1f\x7f", "", "sl/ash" };
static const char *walk_ann[] = {
	"prefer-isolated-cpus.resource-policy.nri.io=true",
	"prefer-shared-cpus.resource-policy.nri.io=true",
	"prefer-shared-cpus.resource-policy.nri.io=false",
	"hide-hyperthreads.resource-policy.nri.io=1",
	"prefer-reserved-cpus.resource-policy.nri.io=true",
	"prefer-cpu-priority.resource-policy.nri.io=high",
	"note.resource-policy.nri.io=\"x\"\\\n\xe2\x82\xac",
	"other.example.com=ignored",
};
static const long long walk_req[] = { -1, 0, 100, 500, 1000, 1500, 2000,
    3000 };

static unsigned int
walk_rand(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return ((*seed >> 16) & 0x7fff);
}

/*
 * Many policies: a seeded random walk of creates (every QoS, annotations,
 * DRA_CPUSET_ environment), updates, removes, claims, releases and syncs
 * with a container that falls back, each state checked.
 */
Test(grants, state_text_random_walk, .timeout = 120)
{
	struct policy_kv	 ann[4], env[2], lab[2], plab[1];
	struct container_spec	 specs[64];
	struct meta		 m;
	char			*ids[64], *claims[8], *cpus, *copy, *eq, *text;
	char			*vals[6];
	unsigned int		 seed = 20240611;
	int			 nids = 0, nclaims = 0, step, i, j, op, n;
	int			 nvals, pinned = 0, fallback = 0, held = 0;
	int			 escaped = 0, labeled = 0;

	for (step = 0; step < 300; step++) {
		op = walk_rand(&seed) % 10;
		nvals = 0;
		if (op < 4 && nids < 64) {
			n = (int)(walk_rand(&seed) % 4);
			for (i = 0; i < n; i++) {
				copy = xstrdup(walk_ann[walk_rand(&seed) % 8]);
				eq = strchr(copy, '=');
				*eq = '\0';
				ann[i].key = copy;
				ann[i].value = eq + 1;
				vals[nvals++] = copy;
			}
			j = 0;
			if (nclaims > 0 && walk_rand(&seed) % 3 == 0) {
				cpus = cpuset_format(policy_claim_cpus(e.P,
				    claims[walk_rand(&seed) % nclaims]));
				xasprintf(&env[0].key, "DRA_CPUSET_%s",
				    claims[walk_rand(&seed) % nclaims]);
				env[0].value = cpus;
				vals[nvals++] = env[0].key;
				vals[nvals++] = cpus;
				j = 1;
			}
			/* Labels from the step, not the seed: the walk
			 * stays the walk it was before they were kept. */
			m.pod_name = walk_names[step % 8];
			lab[0].key = (char *)walk_names[(step + 1) % 8];
			lab[0].value = (char *)walk_names[(step + 2) % 8];
			lab[1].key = (char *)"app";
			lab[1].value = (char *)walk_names[step % 8];
			plab[0].key = (char *)"app";
			plab[0].value = (char *)walk_names[(step + 3) % 8];
			m.labels = lab;
			m.nlabels = 2;
			m.pod_labels = plab;
			m.npod_labels = 1;
			xasprintf(&ids[nids], "c%d-%s", step,
			    walk_rand(&seed) % 2 ? "x" : "y/z");
			i = create_full(ids[nids], (enum qos_class)
			    (walk_rand(&seed) % 3), walk_req[walk_rand(&seed) %
			    8], walk_req[walk_rand(&seed) % 8],
			    walk_names[walk_rand(&seed) % 8],
			    walk_rand(&seed) % 2 ? NULL : "pod-1",
			    walk_rand(&seed) % 3 ? "default" : "kube-system",
			    ann, n, env, j, step % 3 != 0 ? &m : NULL);
			if (i == 0)
				nids++;
			else
				free(ids[nids]);
		} else if (op == 4 && nids > 0) {
			i = (int)(walk_rand(&seed) % (unsigned int)nids);
			env_reset(&e);
			(void)policy_update(e.P, ids[i],
			    walk_req[walk_rand(&seed) % 8],
			    walk_req[walk_rand(&seed) % 8], -1, &e.fx, &e.cause);
		} else if (op == 5 && nids > 0) {
			i = (int)(walk_rand(&seed) % (unsigned int)nids);
			cr_assert_eq(env_remove(&e, ids[i]), 0);
			free(ids[i]);
			ids[i] = ids[--nids];
		} else if (op == 6 && nclaims < 8) {
			xasprintf(&claims[nclaims], "u%d", step);
			xasprintf(&copy, "cpudevnuma%03u=%u",
			    walk_rand(&seed) % 4, 1 + walk_rand(&seed) % 3);
			if (env_claim_for(&e, claims[nclaims], copy,
			    "pod-1") == 0)
				nclaims++;
			else
				free(claims[nclaims]);
			free(copy);
		} else if (op == 7 && nclaims > 0) {
			i = (int)(walk_rand(&seed) % (unsigned int)nclaims);
			cr_assert_eq(env_release(&e, claims[i]), 0);
			free(claims[i]);
			claims[i] = claims[--nclaims];
		} else if (op == 8 && nids < 64) {
			/* The same containers and one that cannot fit. */
			memset(specs, 0, sizeof specs);
			for (i = 0; i < nids; i++) {
				specs[i].id = ids[i];
				specs[i].qos = QOS_BESTEFFORT;
				specs[i].cpu_request = specs[i].cpu_limit = -1;
			}
			xasprintf(&ids[nids], "huge%d", step);
			specs[nids].id = ids[nids];
			specs[nids].qos = QOS_GUARANTEED;
			specs[nids].cpu_request = 400000;
			specs[nids].cpu_limit = 400000;
			env_reset(&e);
			cr_assert_eq(policy_sync(e.P, specs, nids + 1, &e.fx,
			    &e.cause), 0, "%s", e.cause);
			nids++;
		}
		for (i = 0; i < nvals; i++)
			free(vals[i]);
		text = check_text(e.P, 1);
		pinned += strstr(text, "\"kind\":\"claim-pinned\"") != NULL;
		fallback += strstr(text, "\"fallback\":true") != NULL;
		held += strstr(text, "\"kind\":\"claim\"") != NULL;
		escaped += strstr(text, "\\u0001\\u001F\x7f") != NULL;
		labeled += strstr(text, "\"podLabels\":{\"app\":") != NULL;
		free(text);
	}
	/* The walk went through every kind of grant. */
	cr_assert_gt(pinned, 0);
	cr_assert_gt(fallback, 0);
	cr_assert_gt(held, 0);
	cr_assert_gt(escaped, 0);
	cr_assert_gt(labeled, 0);
	cr_assert_gt(policy_ncontainers(e.P), 5);
	for (i = 0; i < nids; i++)
		free(ids[i]);
	for (i = 0; i < nclaims; i++)
		free(claims[i]);
}

/*
 * A shared container's resources.sh says what its pool's does, word for
 * word, whatever moved (so one pool file can serve them all); an
 * exclusive, mixed or claim-pinned one is never said to.
 */
Test(grants, shared_exports_are_their_pools)
{
	static const char *const shared[] = { "be", "bu", "bu2", "frac" };
	static const char *const own[] = { "g2", "mixed", "pin" };
	const struct pool	*p;
	struct policy_kv	*kv;
	char			*a, *b, env[64], *cpus;
	size_t			 i;
	int			 n, round;

	create("be", "BE", -1, -1, NULL, NULL, NULL);
	create("bu", "BU", 500, 2000, NULL, NULL, NULL);
	create("bu2", "BU", 100, -1, NULL, NULL, NULL);
	create("frac", "G", 500, 500, NULL, NULL, NULL);
	create("mixed", "G", 1500, 1500, NULL,
	    "prefer-shared-cpus.resource-policy.nri.io=false", NULL);
	cr_assert_eq(env_claim_for(&e, "c1", "cpudevnuma001=2", "pin"), 0, "%s",
	    e.cause);
	cpus = env_claim_cpus(&e);
	snprintf(env, sizeof env, "DRA_CPUSET_c1=%s", cpus);
	free(cpus);
	create("pin", "BE", -1, -1, NULL, NULL, env);
	for (round = 0; round < 2; round++) {
		/* The second time after exclusive CPUs moved the pools. */
		if (round == 1)
			create("g2", "G", 2000, 2000, NULL, NULL, NULL);
		for (i = 0; i < sizeof shared / sizeof shared[0]; i++) {
			p = policy_export_shared_pool(e.P, shared[i]);
			cr_assert_not_null(p, "%s", shared[i]);
			cr_assert_eq(policy_export(e.P, shared[i], &kv, &n), 0);
			a = env_export_text(kv, n);
			cr_assert_eq(policy_export_pool(e.P, p, &kv, &n), 0);
			b = env_export_text(kv, n);
			cr_assert_str_eq(a, b, "%s in %s", shared[i], p->name);
			cr_assert_not_null(strstr(a, "SHARED_CPUS="), "%s", a);
			free(a);
			free(b);
		}
	}
	for (i = 0; i < sizeof own / sizeof own[0]; i++)
		cr_assert_null(policy_export_shared_pool(e.P, own[i]), "%s",
		    own[i]);
	cr_assert_null(policy_export_shared_pool(e.P, "nobody"));
}
