/*
 * test_undo.c: every policy operation can be put back (policy_undo) when
 * its change cannot be made durable, leaving the saved state text, every
 * container's pinning and every pool's free supply as they were; and the
 * changes it reports (policy_changes) are the grants it touched. On the
 * recorded server with CPUs 3 and 11 reserved.
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

ENV_SERVER_SUITE()

TestSuite(undo, .init = env_setup, .fini = env_teardown);

static void
create(const char *id, const char *qos, long long req, const char *env)
{
	cr_assert_eq(env_create(&e, id, qos, req, req, NULL, NULL, env), 0,
	    "create %s: %s", id, e.cause);
}

/* What a busy node holds: shared, exclusive, isolated, a claim with a
 * pinned container and one waiting for it. */
static void
populate(void)
{
	char	kv[128], *cpus;

	create("be1", "BE", -1, NULL);
	create("bu1", "BU", 500, NULL);
	create("g1", "G", 2000, NULL);
	create("iso", "G", 1000, NULL);
	cr_assert_eq(env_claim_for(&e, "c1", "cpudevnuma001=2", "pin"), 0,
	    "%s", e.cause);
	cpus = cpuset_format(policy_claim_cpus(e.P, "c1"));
	snprintf(kv, sizeof kv, "DRA_CPUSET_c1=%s", cpus);
	free(cpus);
	create("pin", "BE", -1, kv);
	create("wait", "BE", -1, kv);
	env_reset(&e);
}

/* Runs op, checks it changed something, undoes it, checks all is back. */
#define UNDONE(what, call)	ENV_UNDONE(&e, what, call)

Test(undo, every_operation)
{
	struct container_spec	 specs[3];
	const char		*pods[] = { "pin", "wait" };
	struct claim_meta	 m = { "ns", "c1", pods, 2, 1 };
	struct claim_result	 r = { "cpudevnuma002", "3" };
	struct config		*cfg;
	char			*cause = NULL;
	/* CPUs of nodes 0 and 2: never those of c1, a claim on node 1. */
	static const char	 other[] =
	    "{\"reservedResources\":{\"cpu\":\"cpuset:0,2\"}}";

	populate();
	UNDONE("create", env_create(&e, "new", "G", 3000, 3000, NULL, NULL,
	    NULL));
	UNDONE("create again", env_create(&e, "be1", "G", 1000, 1000, NULL,
	    NULL, NULL));
	UNDONE("update", policy_update(e.P, "g1", 4000, 4000, -1, &e.fx,
	    &e.cause));
	UNDONE("update pinned", policy_update(e.P, "pin", 100, 100, -1, &e.fx,
	    &e.cause));
	UNDONE("remove", policy_remove(e.P, "g1", &e.fx));
	UNDONE("claim", policy_claim(e.P, "c2", &r, 1, NULL, &e.fx,
	    &e.cause));
	UNDONE("consumers", policy_claim_consumers(e.P, "c1", &m, &e.fx,
	    &e.cause));
	UNDONE("release", policy_release(e.P, "c1", &e.fx));
	memset(specs, 0, sizeof specs);
	specs[0].id = "be1";
	specs[1].id = "other";
	specs[2].id = "pin";
	specs[0].qos = specs[1].qos = specs[2].qos = QOS_BESTEFFORT;
	specs[0].cpu_request = specs[1].cpu_request = specs[2].cpu_request =
	    -1;
	specs[0].cpu_limit = specs[1].cpu_limit = specs[2].cpu_limit = -1;
	UNDONE("sync", policy_sync(e.P, specs, 3, &e.fx, &e.cause));
	cr_assert_eq(config_parse(other, strlen(other), &cfg, &cause), 0, "%s",
	    cause);
	UNDONE("reconfigure", policy_reconfigure(e.P, cfg, &e.fx, &e.cause));
	config_free(cfg);
	/* After all that, the policy still works as it did. */
	create("after", "G", 2000, NULL);
}

/* A failed operation changes nothing, whatever it did on its way. */
Test(undo, failures_leave_no_trace)
{
	char	*before, *after;

	populate();
	before = env_snapshot(&e);
	cr_assert_neq(env_create(&e, "be1", "G", 200000, 200000, NULL, NULL,
	    NULL), 0);
	cr_assert_neq(env_claim(&e, "c3", "cpudevnuma000=2,cpudevnuma000=40"),
	    0);
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "bu1", 300000, 300000, -1, &e.fx,
	    &e.cause), 0);
	after = env_snapshot(&e);
	cr_assert_str_eq(after, before);
	free(before);
	free(after);
}

Test(undo, changes_name_the_grants_touched)
{
	struct policy_change	*ch;
	int			 n, i, g1 = 0, self = 0;

	populate();
	env_reset(&e);
	cr_assert_eq(policy_remove(e.P, "g1", &e.fx), 0);
	n = policy_changes(e.P, &e.fx, &ch);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(ch[0].key, "g1");
	cr_assert_null(ch[0].grant);
	cr_assert_eq(ch[0].claim, 0);
	free(ch);
	/* A claim that moves shared containers changes only itself. */
	env_reset(&e);
	cr_assert_eq(env_claim(&e, "c9", "cpudevnuma000=2"), 0, "%s", e.cause);
	n = policy_changes(e.P, &e.fx, &ch);
	for (i = 0; i < n; i++) {
		if (ch[i].claim && strcmp(ch[i].key, "c9") == 0 &&
		    ch[i].grant != NULL)
			self++;
		if (!ch[i].claim)
			g1++;
	}
	cr_assert_eq(self, 1);
	cr_assert_eq(g1, 0);
	free(ch);
	/* A sync replaces the whole state. */
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, NULL, 0, &e.fx, &e.cause), 0);
	cr_assert_eq(policy_changes(e.P, &e.fx, &ch), -1);
	cr_assert_null(ch);
}

static unsigned int
rnd(unsigned int *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return ((*seed >> 16) & 0x7fff);
}

/* A seeded walk of operations, every other one undone. */
Test(undo, random_walk, .timeout = 120)
{
	static const char	*qos[] = { "BE", "BU", "G" };
	static const long long	 req[] = { -1, 100, 1000, 1500, 2000, 4000 };
	char			 id[32], res[64], *before, *after;
	unsigned int		 seed = 77;
	int			 step, op, rc, undo, n = 0, nc = 0;

	for (step = 0; step < 400; step++) {
		op = (int)(rnd(&seed) % 6);
		undo = rnd(&seed) % 2;
		before = env_snapshot(&e);
		env_reset(&e);
		if (op < 3) {
			snprintf(id, sizeof id, "c%u", rnd(&seed) % 40);
			rc = env_create(&e, id, qos[rnd(&seed) % 3],
			    req[rnd(&seed) % 6], req[rnd(&seed) % 6], NULL,
			    NULL, NULL);
		} else if (op == 3) {
			snprintf(id, sizeof id, "c%u", rnd(&seed) % 40);
			rc = policy_remove(e.P, id, &e.fx);
		} else if (op == 4) {
			snprintf(id, sizeof id, "k%u", rnd(&seed) % 6);
			snprintf(res, sizeof res, "cpudevnuma%03u=%u",
			    rnd(&seed) % 4, 1 + rnd(&seed) % 3);
			env_reset(&e);
			rc = env_claim(&e, id, res);
			nc += rc == 0;
		} else {
			snprintf(id, sizeof id, "k%u", rnd(&seed) % 6);
			rc = policy_release(e.P, id, &e.fx);
		}
		if (rc != 0 || undo) {
			if (rc == 0)
				policy_undo(e.P, &e.fx);
			after = env_snapshot(&e);
			cr_assert_str_eq(after, before, "step %d op %d", step,
			    op);
			free(after);
			n++;
		}
		free(before);
	}
	cr_assert_gt(n, 100);
	cr_assert_gt(nc, 5);
}
