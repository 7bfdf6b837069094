/*
 * test_consumers.c: who may run on a claim's CPUs (R-CLAIM-9 and the trust
 * model of DESIGN.md). A DRA_CPUSET_<uid> variable only names a claim; a
 * container is pinned to it when its pod is among the claim's consumers
 * as the API server said (reservedFor), or it was pinned there before. On
 * the recorded server with CPUs 3 and 11 reserved; each container is its
 * own pod whose UID is the container id (policylib).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define RESERVED_3_11	"{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"}}"

static struct env	e;
static char		kv[128];
static struct cpuset	held = CPUSET_INITIALIZER;	/* c1's CPUs */

static void
setup(void)
{
	env_open(&e, testlib_machine("server"), RESERVED_3_11);
}

static void
teardown(void)
{
	cpuset_clear(&held);
	env_close(&e);
}

TestSuite(consumers, .init = setup, .fini = teardown);

/* Claim c1 of 2 CPUs of node 1 for pods; kv names it as its CDI spec does. */
static const struct cpuset *
claim_for(const char *pods)
{
	char	*list;

	cr_assert_eq(env_claim_for(&e, "c1", "cpudevnuma001=2", pods), 0,
	    "%s", e.cause);
	list = cpuset_format(policy_claim_cpus(e.P, "c1"));
	snprintf(kv, sizeof kv, "DRA_CPUSET_c1=%s", list);
	free(list);
	/* A copy: a sync or restore makes the claim anew. */
	cpuset_copy(&held, policy_claim_cpus(e.P, "c1"));
	return (&held);
}

static void
create(const char *id, const char *ns, const char *envs)
{
	cr_assert_eq(env_create(&e, id, "BE", -1, -1, ns, NULL, envs), 0,
	    "create %s: %s", id, e.cause);
}

static int
pinned_to(const char *id, const struct cpuset *claim)
{
	const struct pinning	*p = policy_pinning(e.P, id);

	cr_assert_not_null(p, "%s has no pinning", id);
	return (cpuset_equal(&p->cpus, claim));
}

static int
touches(const char *id, const struct cpuset *claim)
{
	const struct pinning	*p = policy_pinning(e.P, id);

	cr_assert_not_null(p, "%s has no pinning", id);
	return (cpuset_and_count(&p->cpus, claim) > 0);
}

Test(consumers, only_the_claims_pods_are_pinned)
{
	const struct cpuset	*c = claim_for("owner");

	create("owner", "team-a", kv);
	cr_assert(pinned_to("owner", c));
	cr_assert_eq(e.fx.nrefused, 0);
	/* The exact variable, forged by a pod in another namespace... */
	create("thief", "team-b", kv);
	cr_assert(!touches("thief", c), "a forging pod got the claim's CPUs");
	cr_assert_eq(e.fx.nrefused, 1);
	cr_assert_not_null(strstr(e.fx.refused[0], "thief"));
	cr_assert_not_null(strstr(e.fx.refused[0], "c1"));
	cr_assert_eq(e.fx.nverify, 1);
	cr_assert_str_eq(e.fx.verify[0], "c1");
	/* ...and by one in the same namespace. */
	create("neighbour", "team-a", kv);
	cr_assert(!touches("neighbour", c));
	cr_assert_eq(e.fx.nrefused, 1);
}

Test(consumers, unknown_consumers_pin_nobody_new)
{
	const struct cpuset	*c = claim_for(NULL);

	create("p", NULL, kv);
	cr_assert(!touches("p", c));
	cr_assert_eq(e.fx.nrefused, 1);
	cr_assert_not_null(strstr(e.fx.refused[0], "not known yet"));
}

Test(consumers, a_create_asks_which_claims_to_read_again)
{
	struct container_spec	 s;
	struct policy_kv	 env[1];
	char			**uids;
	char			*copy = xstrdup(kv), *eq;

	claim_for("owner");
	free(copy);
	copy = xstrdup(kv);
	eq = strchr(copy, '=');
	*eq = '\0';
	env[0].key = copy;
	env[0].value = eq + 1;
	memset(&s, 0, sizeof s);
	s.id = "x";
	s.pod_uid = "owner";
	s.qos = QOS_BESTEFFORT;
	s.cpu_request = s.cpu_limit = -1;
	s.env = env;
	s.nenv = 1;
	cr_assert_eq(policy_claims_unverified(e.P, &s, &uids), 0);
	cr_assert_null(uids);
	s.pod_uid = "other";
	cr_assert_eq(policy_claims_unverified(e.P, &s, &uids), 1);
	cr_assert_str_eq(uids[0], "c1");
	free(uids[0]);
	free(uids);
	/* A wrong value is no question for the API server. */
	env[0].value = (char *)"0-3";
	cr_assert_eq(policy_claims_unverified(e.P, &s, &uids), 0);
	free(copy);
}

Test(consumers, a_second_consumer_added_after_prepare_is_pinned_by_update)
{
	const char		*pods[] = { "first", "second" };
	struct claim_meta	 m = { "ns", "claim", pods, 2, 1 };
	const struct cpuset	*c = claim_for("first");
	int			 i, found = 0;

	create("first", "ns", kv);
	create("second", "ns", kv);
	cr_assert(!touches("second", c));
	env_reset(&e);
	cr_assert_eq(policy_claim_consumers(e.P, "c1", &m, &e.fx, &e.cause), 0,
	    "%s", e.cause);
	cr_assert(e.fx.save);
	for (i = 0; i < e.fx.nupdates; i++)
		if (strcmp(e.fx.updates[i].id, "second") == 0) {
			found = 1;
			cr_assert(cpuset_equal(&policy_pinning(e.P,
			    "second")->cpus, c));
		}
	cr_assert(found, "no update pins the second consumer");
	cr_assert(pinned_to("second", c));
	cr_assert(pinned_to("first", c));
	/* Read again, the same: nothing to save, nobody moves. */
	env_reset(&e);
	cr_assert_eq(policy_claim_consumers(e.P, "c1", &m, &e.fx, &e.cause), 0);
	cr_assert(!e.fx.save);
	cr_assert_eq(e.fx.nupdates, 0);
}

Test(consumers, a_pod_dropped_from_reserved_for_stays_pinned)
{
	const char		*pods[] = { "other" };
	struct claim_meta	 m = { NULL, NULL, pods, 1, 1 };
	const struct cpuset	*c = claim_for("p");

	create("p", NULL, kv);
	cr_assert(pinned_to("p", c));
	env_reset(&e);
	cr_assert_eq(policy_claim_consumers(e.P, "c1", &m, &e.fx, &e.cause), 0);
	cr_assert(pinned_to("p", c));
	/* A resize keeps it where it was pinned. */
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "p", 100, 200, -1, &e.fx, &e.cause), 0);
	cr_assert(pinned_to("p", c));
}

Test(consumers, consumers_of_a_claim_not_held)
{
	const char		*pods[] = { "p" };
	struct claim_meta	 m = { NULL, NULL, pods, 1, 1 };

	cr_assert_eq(policy_claim_consumers(e.P, "nope", &m, &e.fx, &e.cause),
	    -ENOENT);
	cr_assert_not_null(strstr(e.cause, "not held"));
}

Test(consumers, too_many_or_bad_consumers_are_refused)
{
	const char		*pods[POLICY_MAX_CONSUMERS + 1];
	const char		*bad[] = { "a b" };
	struct claim_meta	 m = { NULL, NULL, pods, 0, 1 };
	int			 i;

	for (i = 0; i <= POLICY_MAX_CONSUMERS; i++)
		pods[i] = "p";
	m.npods = POLICY_MAX_CONSUMERS + 1;
	cr_assert_neq(policy_claim(e.P, "c9", NULL, 0, &m, &e.fx, &e.cause), 0);
	env_reset(&e);
	claim_for("x");
	m.pods = bad;
	m.npods = 1;
	cr_assert_eq(policy_claim_consumers(e.P, "c1", &m, &e.fx, &e.cause),
	    -EINVAL);
	cr_assert_eq(policy_nclaims(e.P), 1);
}

static struct policy *
restart(const char *text)
{
	struct policy	*R = NULL;
	json_t		*doc;
	json_error_t	 err;

	doc = json_loads(text, 0, &err);
	cr_assert_not_null(doc, "%s", err.text);
	env_reset(&e);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0, "%s",
	    e.cause);
	json_decref(doc);
	return (R);
}

Test(consumers, consumers_and_pod_uids_survive_a_restart)
{
	const struct cpuset	*c = claim_for("owner");
	struct policy		*R;
	char			*text, *again, **uids;
	const char		*ns, *name;

	create("owner", NULL, kv);
	create("thief", NULL, kv);
	text = policy_save_text(e.P, NULL);
	cr_assert_not_null(strstr(text, "\"consumers\":[\"owner\"]"), "%s",
	    text);
	cr_assert_not_null(strstr(text, "\"podUID\":\"thief\""));
	R = restart(text);
	again = policy_save_text(R, NULL);
	cr_assert_str_eq(again, text);
	cr_assert(cpuset_equal(&policy_pinning(R, "owner")->cpus, c));
	cr_assert(cpuset_and_count(&policy_pinning(R, "thief")->cpus, c) == 0);
	cr_assert_eq(policy_claims_unknown(R, &uids), 0);
	cr_assert_eq(policy_claim_ref(R, "c1", &ns, &name), 0);
	free(again);
	free(text);
	policy_free(R);
}

/* A state of version 1: no consumers, a container pinned by then. */
Test(consumers, version_1_claims_are_read_again_and_keep_their_pinned)
{
	struct policy	*R;
	char		**uids, *text;
	const char	*ns = "x", *name = "x";
	const char	*v1 = "{\"version\":1,\"grants\":{\"claim:old\":{\"kind\":"
	    "\"claim\",\"cpus\":\"1,57\",\"pool\":\"node #1\"},\"p\":{\"kind\":"
	    "\"claim-pinned\",\"claims\":[\"old\"],\"container\":{\"qos\":"
	    "\"BestEffort\",\"cpuRequest\":-1,\"cpuLimit\":-1,\"annotations\":"
	    "{},\"env\":{\"DRA_CPUSET_old\":\"1,57\"}}},\"q\":{\"kind\":"
	    "\"container\",\"pool\":\"root\",\"type\":\"normal\",\"exclusive\":"
	    "\"\",\"portion\":0,\"zeroRequest\":true,\"fallback\":false,"
	    "\"container\":{\"qos\":\"BestEffort\",\"cpuRequest\":-1,"
	    "\"cpuLimit\":-1,\"annotations\":{},\"env\":{\"DRA_CPUSET_old\":"
	    "\"1,57\"}}}}}";

	R = restart(v1);
	cr_assert_eq(policy_claims_unknown(R, &uids), 1);
	cr_assert_str_eq(uids[0], "old");
	free(uids[0]);
	free(uids);
	cr_assert_eq(policy_claim_ref(R, "old", &ns, &name), 0);
	cr_assert_null(ns);
	cr_assert_null(name);
	/* Pinned before, pinned still; never pinned, not pinned now. */
	cr_assert_eq(cpuset_count(&policy_pinning(R, "p")->cpus), 2);
	cr_assert(cpuset_has(&policy_pinning(R, "p")->cpus, 1));
	cr_assert(!cpuset_has(&policy_pinning(R, "q")->cpus, 1));
	/* Saved again as version 2, still without consumers. */
	text = policy_save_text(R, NULL);
	cr_assert_eq(strncmp(text, "{\"version\":3,", 13), 0);
	cr_assert_null(strstr(text, "consumers"));
	free(text);
	policy_free(R);
}

Test(consumers, a_reprepare_updates_the_consumers)
{
	const struct cpuset	*c = claim_for("a");

	create("b", NULL, kv);
	cr_assert(!touches("b", c));
	/* The kubelet prepares the claim again with b reserved too. */
	cr_assert_eq(env_claim_for(&e, "c1", "cpudevnuma001=2", "a,b"), 0,
	    "%s", e.cause);
	cr_assert(pinned_to("b", c));
}

Test(consumers, sync_keeps_the_pinned_and_refuses_the_rest)
{
	struct container_spec	 specs[2];
	struct policy_kv	 env[1];
	const struct cpuset	*c = claim_for("owner");
	char			*copy, *eq;

	create("owner", NULL, kv);
	copy = xstrdup(kv);
	eq = strchr(copy, '=');
	*eq = '\0';
	env[0].key = copy;
	env[0].value = eq + 1;
	memset(specs, 0, sizeof specs);
	specs[0].id = "owner";
	specs[0].qos = QOS_BESTEFFORT;
	specs[0].cpu_request = specs[0].cpu_limit = -1;
	specs[1] = specs[0];
	specs[1].id = "new";
	specs[1].pod_uid = "stranger";
	specs[1].env = env;
	specs[1].nenv = 1;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, specs, 2, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert(pinned_to("owner", c));
	cr_assert(!touches("new", c));
	cr_assert_eq(e.fx.nverify, 1);
	free(copy);
}

/*
 * One pod writes what it likes into its spec: what is kept is capped, the
 * container is still placed, and one warning says so.
 */
Test(consumers, hostile_metadata_is_capped)
{
	struct container_spec	 s;
	struct policy_kv	*ann, *env;
	char			*text;
	int			 i, nann = 9000, nenv = 50000;

	ann = xcalloc((size_t)nann, sizeof *ann);
	env = xcalloc((size_t)nenv, sizeof *env);
	for (i = 0; i < nann; i++) {
		xasprintf(&ann[i].key, "k%d.resource-policy.nri.io", i);
		ann[i].value = (char *)"v";
	}
	for (i = 0; i < nenv; i++) {
		xasprintf(&env[i].key, "DRA_CPUSET_u%d", i);
		env[i].value = (char *)"1";
	}
	memset(&s, 0, sizeof s);
	s.id = "hostile";
	s.qos = QOS_BESTEFFORT;
	s.cpu_request = s.cpu_limit = -1;
	s.annotations = ann;
	s.nannotations = nann;
	s.env = env;
	s.nenv = nenv;
	env_reset(&e);
	cr_assert_eq(policy_create(e.P, &s, &e.fx, &e.cause), 0, "%s", e.cause);
	/* One warning for the caps, one for the variables naming nothing. */
	cr_assert_eq(e.fx.nwarnings, 2);
	cr_assert_not_null(strstr(e.fx.warnings[0], "past the limits"));
	cr_assert_eq(e.fx.nrefused, 0);
	text = policy_save_text(e.P, NULL);
	cr_assert_lt(strlen(text), (size_t)POLICY_MAX_KEPT_BYTES + 4096);
	cr_assert_not_null(strstr(text, "k127.resource-policy.nri.io"));
	cr_assert_null(strstr(text, "k128.resource-policy.nri.io"));
	cr_assert_not_null(strstr(text, "DRA_CPUSET_u31\""));
	cr_assert_null(strstr(text, "DRA_CPUSET_u32\""));
	free(text);
	for (i = 0; i < nann; i++)
		free(ann[i].key);
	for (i = 0; i < nenv; i++)
		free(env[i].key);
	free(ann);
	free(env);
}

Test(consumers, dot_ids_are_refused)
{
	cr_assert_neq(env_create(&e, ".", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_not_null(strstr(e.cause, "\"..\""));
	cr_assert_neq(env_create(&e, "..", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_eq(env_create(&e, "...", "BE", -1, -1, NULL, NULL, NULL), 0);
	cr_assert_neq(env_claim(&e, "..", "cpudevnuma001=1"), 0);
	cr_assert_neq(env_claim(&e, "a..b", "cpudevnuma001=1"), 0);
	cr_assert_neq(env_claim(&e, "a/b", "cpudevnuma001=1"), 0);
}
