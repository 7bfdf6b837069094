/*
 * test_memacct.c: memory accounted per zone (libmem's rules through the
 * policy): the Go e2e suite's n6 test01 to its end (a PMEM request that
 * overflows a node is spread over two), widening that moves other
 * containers and tells the runtime, release, update, undo, restore,
 * sync, the request read back from the OOM score adjustment, and a
 * memory-heavy workload that no longer piles onto one node.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define KEY	"memory-type.resource-policy.nri.io/container."
#define MB	(1000LL * 1000)

static struct env	e;

static void
open_n6(void)
{
	env_open_spec(&e, TESTLIB_N6, "{}");
}

static void
teardown(void)
{
	env_close(&e);
}

TestSuite(memacct, .fini = teardown);

/* A Guaranteed 100m container of mem bytes, its types annotated (NULL:
 * the default). */
static void
create_g(const char *id, const char *types, long long mem)
{
	char	*ann = NULL;

	if (types != NULL)
		xasprintf(&ann, KEY "%s=%s", id, types);
	cr_assert_eq(env_create_mem(&e, id, "G", 100, 100, mem, -997,
	    "default", ann, NULL), 0, "%s: %s", id, e.cause ? e.cause : "");
	free(ann);
}

static int
package_of(const char *id)
{
	return (env_package_of(&e, id));
}

/* id's memory nodes are want (list form), in its pinning and its zone. */
static void
assert_nodes(const char *id, const char *want)
{
	struct cpuset		 w = CPUSET_INITIALIZER, z = CPUSET_INITIALIZER;
	const struct pinning	*p = policy_pinning(e.P, id);
	char			*got;

	cr_assert_not_null(p, "%s is not placed", id);
	cr_assert_eq(cpuset_parse(&w, want, NULL), 0);
	got = cpuset_format(&p->mems);
	cr_assert(cpuset_equal(&p->mems, &w), "%s is pinned to memory %s, "
	    "not %s", id, got, want);
	cr_assert(policy_mem_zone(e.P, id, &z), "%s has no zone", id);
	cr_assert(cpuset_equal(&z, &w), "%s's zone is not %s", id, want);
	free(got);
	cpuset_clear(&w);
	cpuset_clear(&z);
}

/* Nodes given for package 0 (dram0 0, hbm0 2, pmem0 4), shifted to the
 * package id's CPUs are on. */
static void
assert_local(const char *id, const char *want0)
{
	struct cpuset	 w = CPUSET_INITIALIZER, s = CPUSET_INITIALIZER;
	char		*list;
	int		 n, pkg = package_of(id);

	cr_assert_eq(cpuset_parse(&w, want0, NULL), 0);
	CPUSET_FOREACH(n, &w)
		cpuset_add(&s, n + pkg);
	list = cpuset_format(&s);
	assert_nodes(id, list);
	free(list);
	cpuset_clear(&w);
	cpuset_clear(&s);
}

/* Bytes not accounted to anyone in the whole machine's zone. */
static long long
machine_free(void)
{
	return (memalloc_zone_free(e.P->mem, ~(memmask_t)0 >>
	    (64 - topology_nnodes(e.topo))));
}

Test(memacct, go_test01_to_its_end)
{
	long long	total;
	int		i;

	open_n6();
	cr_assert_not_null(e.P->mem);
	total = machine_free();
	create_g("pod0c0", NULL, 512 * MB);
	create_g("pod0c1", "dram", 512 * MB);
	create_g("pod0c2", "hbm", 512 * MB);
	create_g("pod0c3", "pmem", 512 * MB);
	assert_local("pod0c0", "0,4");
	assert_local("pod0c1", "0");
	assert_local("pod0c2", "2");
	assert_local("pod0c3", "4");
	cr_assert_eq(machine_free(), total - 4 * 512 * MB);

	/* What pod0 held is given back, or pod1 would not fit as below. */
	for (i = 0; i < 4; i++) {
		char	id[8];

		snprintf(id, sizeof id, "pod0c%d", i);
		cr_assert_eq(env_remove(&e, id), 0);
	}
	cr_assert_eq(machine_free(), total);

	create_g("pod1c0", "hbm,dram", 2816 * MB);
	create_g("pod1c1", "hbm,dram", 2816 * MB);
	create_g("pod1c2", "pmem", 2816 * MB);
	create_g("pod1c3", "pmem", 2816 * MB);
	assert_local("pod1c0", "0,2");
	assert_local("pod1c1", "0,2");
	assert_local("pod1c2", "4");
	assert_local("pod1c3", "4");
	/* Two of 2816M do not fit one HBM+DRAM zone, nor one PMEM node. */
	cr_assert_neq(package_of("pod1c0"), package_of("pod1c1"));
	cr_assert_neq(package_of("pod1c2"), package_of("pod1c3"));

	/* 2G more of PMEM fits in no single PMEM node: the smaller, newer
	 * request is spread over both, the others stay. */
	create_g("pod2c0", "pmem", 2000 * MB);
	assert_nodes("pod2c0", "4-5");
	assert_local("pod1c0", "0,2");
	assert_local("pod1c1", "0,2");
	assert_local("pod1c2", "4");
	assert_local("pod1c3", "4");
	cr_assert_eq(e.fx.nupdates, 0, "nobody else moved");
}

/* Every container's pinned memory is its zone, and no zone a container
 * has holds more than its nodes do. */
static void
assert_consistent(const char *const *ids, int n)
{
	struct cpuset	z = CPUSET_INITIALIZER;
	memmask_t	m;
	int		i;

	for (i = 0; i < n; i++) {
		cr_assert(policy_mem_zone(e.P, ids[i], &z), "%s: no zone",
		    ids[i]);
		cr_assert(cpuset_equal(&z, &policy_pinning(e.P, ids[i])->mems),
		    "%s is not pinned to its zone", ids[i]);
		m = policy_mem_mask(e.P, &z);
		cr_assert_geq(memalloc_zone_free(e.P->mem, m), 0,
		    "%s's zone is overcommitted", ids[i]);
	}
	cpuset_clear(&z);
}

Test(memacct, widening_moves_others_and_tells_the_runtime)
{
	const char *const	 ids[] = { "c1", "c2" };
	struct cpuset		 z = CPUSET_INITIALIZER;
	const struct pinning	*u;
	long long		 cap;
	int			 pkg;

	open_n6();
	cap = (long long)topology_node_by_id(e.topo, 0)->memory;
	/* One package's CPUs all taken: the others go to the other. */
	cr_assert_eq(env_create(&e, "filler", "G", 4000, 4000, NULL, NULL,
	    NULL), 0, "%s", e.cause);
	pkg = package_of("filler");
	create_g("c1", "dram", cap / 4);
	cr_assert_neq(package_of("c1"), pkg);
	assert_local("c1", "0");
	/* 1/4 and 7/8 of a DRAM node: the smaller, older one is spread
	 * over both DRAM nodes, and the runtime is told. */
	create_g("c2", "dram", cap / 8 * 7);
	cr_assert_neq(package_of("c2"), pkg);
	assert_local("c2", "0");
	assert_nodes("c1", "0-1");
	u = env_update(&e, "c1");
	cr_assert_not_null(u, "c1 moved, the runtime is not told");
	cr_assert_eq(cpuset_parse(&z, "0-1", NULL), 0);
	cr_assert(cpuset_equal(&u->mems, &z));
	assert_consistent(ids, 2);
	/* Journaled: the record names c1 too. */
	{
		char *rec = policy_record_text(e.P, &e.fx, NULL, NULL);

		cr_assert_not_null(strstr(rec, "\"c1\":{"), "%s", rec);
		free(rec);
	}
	/* More than the machine has fits nowhere, widened as it may be. */
	cr_assert_neq(env_create_mem(&e, "c3", "G", 100, 100,
	    e.P->mem_total, -997, "default", KEY "c3=dram", NULL), 0);
	cr_assert_not_null(strstr(e.cause, "memory"), "%s", e.cause);
	cr_assert_null(policy_pinning(e.P, "c3"));
	assert_nodes("c1", "0-1");
	cpuset_clear(&z);
}

/*
 * A shared container whose memory was widened has a file of its own
 * (its pool's says less): moved later by its pool's shared CPUs alone,
 * it is still not marked as its pool's file.
 */
Test(memacct, a_widened_container_moved_by_its_pool_keeps_its_file)
{
	long long	cap;
	int		i, moved = 0;

	open_n6();
	cap = (long long)topology_node_by_id(e.topo, 0)->memory;
	cr_assert_eq(env_create(&e, "filler", "G", 4000, 4000, NULL, NULL,
	    NULL), 0, "%s", e.cause);
	/* A DRAM node and its PMEM one hold 5 of these; these take 5.5. */
	create_g("c1", NULL, cap / 2 * 5);
	cr_assert_not_null(policy_export_shared_pool(e.P, "c1"));
	create_g("c2", NULL, cap * 3);
	cr_assert_gt(cpuset_count(&policy_pinning(e.P, "c1")->mems), 1);
	cr_assert_null(policy_export_shared_pool(e.P, "c1"),
	    "widened, it has a file of its own");
	env_reset(&e);
	cr_assert_eq(env_create(&e, "g2", "G", 2000, 2000, NULL, NULL, NULL),
	    0, "%s", e.cause);
	for (i = 0; i < e.fx.nupdates; i++)
		if (strcmp(e.fx.updates[i].id, "c1") == 0) {
			moved = 1;
			cr_assert(!e.fx.updates[i].pool_file);
		}
	cr_assert(moved, "c1 did not move");
}

/* A node holding the three of the test above, with a BestEffort one. */
static long long
populate(void)
{
	long long	cap;

	open_n6();
	cap = (long long)topology_node_by_id(e.topo, 4)->memory;
	cr_assert_eq(env_create(&e, "be", "BE", -1, -1, NULL, NULL, NULL), 0);
	create_g("c1", "pmem", cap / 4);
	create_g("c2", "pmem", cap / 8 * 7);
	env_reset(&e);
	return (cap);
}

#define UNDONE(what, call)	ENV_UNDONE(&e, what, call)

Test(memacct, every_memory_change_is_undone)
{
	long long	cap = populate();

	UNDONE("create that spreads another", env_create_mem(&e, "c3", "G",
	    100, 100, cap / 8 * 7, -997, "default", KEY "c3=pmem", NULL));
	UNDONE("remove", policy_remove(e.P, "c2", &e.fx));
	UNDONE("resize", policy_update(e.P, "c1", 100, 100, cap / 2, &e.fx,
	    &e.cause));
	UNDONE("grow the BestEffort one", policy_update(e.P, "be", -1, -1,
	    cap, &e.fx, &e.cause));
}

Test(memacct, update_resizes_in_place)
{
	long long	cap = populate(), before = machine_free();

	cr_assert_eq(policy_update(e.P, "c1", 100, 100, cap / 2, &e.fx,
	    &e.cause), 0, "%s", e.cause);
	cr_assert_eq(policy_mem_size(e.P, "c1"), cap / 2);
	cr_assert_eq(machine_free(), before - (cap / 2 - cap / 4));
	/* -1: the memory limit stays as it was. */
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "c1", 200, 200, -1, &e.fx, &e.cause),
	    0, "%s", e.cause);
	cr_assert_eq(policy_mem_size(e.P, "c1"), cap / 2);
	env_reset(&e);
	cr_assert_neq(policy_update(e.P, "c1", 100, 100, -5, &e.fx, &e.cause),
	    0);
}

/* The state text through policy_restore gives the same text back. */
static struct policy *
restored(const char *text)
{
	struct policy	*R = NULL;
	json_error_t	 err;
	json_t		*doc = json_loads(text, 0, &err);

	cr_assert_not_null(doc, "%s", err.text);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0,
	    "%s", e.cause);
	json_decref(doc);
	return (R);
}

Test(memacct, zones_survive_a_restart)
{
	long long	 cap = populate();
	struct policy	*R;
	struct cpuset	 a = CPUSET_INITIALIZER, b = CPUSET_INITIALIZER;
	char		*t1, *t2;
	const char	*ids[] = { "be", "c1", "c2", "c3" };
	int		 i;

	create_g("c3", "pmem", cap / 8 * 7);
	t1 = policy_save_text(e.P, NULL);
	cr_assert_not_null(strstr(t1, "\"memory\":{\"bytes\":"), "%s", t1);
	R = restored(t1);
	t2 = policy_save_text(R, NULL);
	cr_assert_str_eq(t2, t1);
	for (i = 0; i < 4; i++) {
		cr_assert(policy_mem_zone(e.P, ids[i], &a));
		cr_assert(policy_mem_zone(R, ids[i], &b));
		cr_assert(cpuset_equal(&a, &b), "%s", ids[i]);
		cr_assert(cpuset_equal(&b, &policy_pinning(R, ids[i])->mems),
		    "%s is not pinned to its restored zone", ids[i]);
	}
	policy_free(R);
	free(t1);
	free(t2);
	cpuset_clear(&a);
	cpuset_clear(&b);
}

/* A zone is history: widened once, it stays wide when what widened it
 * is gone (libmem never narrows), and a restart keeps it so. */
Test(memacct, a_widened_zone_stays_after_a_restart)
{
	struct policy	*R;
	struct cpuset	 z = CPUSET_INITIALIZER;
	long long	 cap;
	char		*t1, *t2;

	open_n6();
	cap = (long long)topology_node_by_id(e.topo, 0)->memory;
	cr_assert_eq(env_create(&e, "filler", "G", 4000, 4000, NULL, NULL,
	    NULL), 0, "%s", e.cause);
	create_g("c1", "dram", cap / 4);
	create_g("c2", "dram", cap / 8 * 7);
	cr_assert_eq(env_remove(&e, "c2"), 0);
	cr_assert_eq(cpuset_count(&policy_pinning(e.P, "c1")->mems), 2);
	t1 = policy_save_text(e.P, NULL);
	R = restored(t1);
	cr_assert(policy_mem_zone(R, "c1", &z));
	cr_assert_eq(cpuset_count(&z), 2, "c1 narrowed at the restart");
	t2 = policy_save_text(R, NULL);
	cr_assert_str_eq(t2, t1);
	policy_free(R);
	free(t1);
	free(t2);

	/* A reload and a Synchronize that keep c1 keep its zone too. */
	env_reset(&e);
	cr_assert_eq(policy_reconfigure(e.P, e.cfg, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert(policy_mem_zone(e.P, "c1", &z));
	cr_assert_eq(cpuset_count(&z), 2, "c1 narrowed at a reload");
	{
		struct container_spec	s2[2];

		memset(s2, 0, sizeof s2);
		s2[0].id = s2[0].pod = "filler";
		s2[0].qos = QOS_GUARANTEED;
		s2[0].cpu_request = s2[0].cpu_limit = 4000;
		s2[1].id = s2[1].pod = "c1";
		s2[1].qos = QOS_GUARANTEED;
		s2[1].cpu_request = s2[1].cpu_limit = 100;
		s2[1].mem_limit = cap / 4;
		env_reset(&e);
		cr_assert_eq(policy_sync(e.P, s2, 2, &e.fx, &e.cause), 0, "%s",
		    e.cause);
	}
	cr_assert(policy_mem_zone(e.P, "c1", &z));
	cr_assert_eq(cpuset_count(&z), 2, "c1 narrowed at a Synchronize");
	cpuset_clear(&z);
}

Test(memacct, a_state_without_memory_is_accounted_again)
{
	struct policy	*R;
	char		*t1, *cut, *p, *q;

	populate();
	t1 = policy_save_text(e.P, NULL);
	/* What an older version wrote: no "memory" objects. */
	cut = xstrdup(t1);
	while ((p = strstr(cut, ",\"memory\":{")) != NULL) {
		q = strchr(p, '}');
		memmove(p, q + 1, strlen(q + 1) + 1);
	}
	cr_assert_null(strstr(cut, "memory\""));
	R = restored(cut);
	cr_assert_eq(policy_mem_size(R, "c2"), policy_mem_size(e.P, "c2"));
	cr_assert_gt(policy_mem_size(R, "c2"), 0);
	policy_free(R);
	free(t1);
	free(cut);
}

Test(memacct, sync_keeps_frees_and_adds)
{
	struct container_spec	 s[2];
	long long		 cap = populate(), total;
	struct cpuset		 z = CPUSET_INITIALIZER, z2 = CPUSET_INITIALIZER;

	total = machine_free() + cap / 4 + cap / 8 * 7;
	cr_assert(policy_mem_zone(e.P, "c2", &z));
	memset(s, 0, sizeof s);
	/* c2 still runs, c1 and be are gone, n1 is new. */
	s[0].id = "c2";
	s[0].pod = "c2";
	s[0].qos = QOS_GUARANTEED;
	s[0].cpu_request = s[0].cpu_limit = 100;
	s[0].mem_limit = cap / 8 * 7;
	s[1] = s[0];
	s[1].id = "n1";
	s[1].pod = "n1";
	s[1].mem_limit = cap / 2;
	cr_assert_eq(policy_sync(e.P, s, 2, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert(policy_mem_zone(e.P, "c2", &z2));
	cr_assert(cpuset_equal(&z, &z2), "c2 kept its zone");
	cr_assert_eq(policy_mem_size(e.P, "c1"), -1);
	cr_assert_eq(policy_mem_size(e.P, "n1"), cap / 2);
	cr_assert_eq(machine_free(), total - cap / 8 * 7 - cap / 2);
	cpuset_clear(&z);
	cpuset_clear(&z2);
}

/* The kubelet's OOM score adjustment of a Burstable container. */
static long long
kubelet_adj(long long req, long long cap)
{
	long long	a = 1000 - (long long)((__int128)req * 1000 / cap);

	return (a < 3 ? 3 : a > 999 ? 999 : a);
}

Test(memacct, request_read_back_from_the_oom_score_adjustment)
{
	const long long	caps[] = { 2LL << 30, 12LL << 30, 1536LL << 30,
	    999999999937LL };
	long long	cap, est;
	int		i, adj;

	for (i = 0; i < 4; i++) {
		cap = caps[i];
		for (adj = 3; adj <= 999; adj++) {
			est = request_mem_from_oom(adj, cap);
			/* The smallest request the kubelet gives adj. */
			cr_assert_eq(kubelet_adj(est, cap), adj,
			    "adj %d cap %lld: %lld", adj, cap, est);
			if (adj < 999)
				cr_assert_neq(kubelet_adj(est - 1, cap), adj,
				    "adj %d cap %lld: %lld is not the least",
				    adj, cap, est);
		}
		cr_assert_eq(request_mem_from_oom(2, cap), 0);
		cr_assert_eq(request_mem_from_oom(1000, cap), 0);
		cr_assert_eq(request_mem_from_oom(-997, cap), 0);
	}
}

Test(memacct, burstable_request_and_limit)
{
	long long	cap;

	open_n6();
	cap = e.P->mem_total;
	/* Request 1/10 of the machine, limit 1/2: the request is taken. */
	cr_assert_eq(env_create_mem(&e, "b1", "BU", 100, 200, cap / 2,
	    (int)kubelet_adj(cap / 10, cap), NULL, NULL, NULL), 0, "%s",
	    e.cause);
	/* The least request with its adjustment: within 1/1000 of the
	 * machine below the real one. */
	cr_assert_leq(policy_mem_size(e.P, "b1"), cap / 10, "%lld of %lld",
	    policy_mem_size(e.P, "b1"), cap);
	cr_assert_gt(policy_mem_size(e.P, "b1"), cap / 10 - cap / 1000 - 1);
	/* No adjustment to read: the limit. */
	cr_assert_eq(env_create_mem(&e, "b2", "BU", 100, 200, 123 * MB,
	    ENV_NO_OOM, NULL, NULL, NULL), 0);
	cr_assert_eq(policy_mem_size(e.P, "b2"), 123 * MB);
	/* BestEffort asks for nothing, but is accounted (and movable). */
	cr_assert_eq(env_create_mem(&e, "be", "BE", -1, -1, 0, 1000, NULL,
	    NULL, NULL), 0);
	cr_assert_eq(policy_mem_size(e.P, "be"), 0);
}

/* A container pinned to a claim: its memory is accounted on the claim's
 * node (its DRAM and that node's PMEM), whatever its pool would be. */
Test(memacct, a_claims_container_is_accounted_on_the_claims_node)
{
	char	 kv[128], *cpus;
	long long cap;

	open_n6();
	cap = (long long)topology_node_by_id(e.topo, 1)->memory;
	cr_assert_eq(env_claim_for(&e, "u1", "cpudevnuma001=2",
	    "pin,pin2"), 0, "%s", e.cause);
	cpus = cpuset_format(policy_claim_cpus(e.P, "u1"));
	snprintf(kv, sizeof kv, "DRA_CPUSET_u1=%s", cpus);
	free(cpus);
	cr_assert_eq(env_create_mem(&e, "pin", "G", 1000, 1000, cap / 2, -997,
	    NULL, NULL, kv), 0, "%s", e.cause);
	cr_assert_str_eq(e.fx.self_pool, "claims");
	assert_nodes("pin", "1,5");
	cr_assert_eq(policy_mem_size(e.P, "pin"), cap / 2);
	/* Its node is short for more: another claim container overcommits
	 * rather than being refused (a claim is a contract). */
	cr_assert_eq(env_create_mem(&e, "pin2", "G", 1000, 1000, cap * 8,
	    -997, NULL, NULL, kv), 0, "%s", e.cause);
	cr_assert_eq(policy_mem_size(e.P, "pin2"), cap * 8);
	/* The claim released: it is an ordinary container, still
	 * accounted, now from its pool. */
	cr_assert_eq(env_remove(&e, "pin2"), 0);
	cr_assert_eq(env_release(&e, "u1"), 0);
	cr_assert_eq(policy_mem_size(e.P, "pin"), cap / 2);
}

Test(memacct, heavy_containers_spread_over_nodes)
{
	long long	 cap;
	char		 id[8];
	int		 i, on[2] = { 0, 0 };

	env_open_spec(&e, "packages=1,nodes=2,cores=8,mem=4G", "{}");
	cap = (long long)topology_node(e.topo, 0)->memory;
	/* Four of 0.4 of a node each: at most two fit on one node. */
	for (i = 0; i < 4; i++) {
		snprintf(id, sizeof id, "h%d", i);
		cr_assert_eq(env_create_mem(&e, id, "BU", 100, 200,
		    cap / 10 * 4, ENV_NO_OOM, NULL, NULL, NULL), 0, "%s: %s",
		    id, e.cause);
		on[cpuset_first(&policy_pinning(e.P, id)->mems)]++;
		cr_assert_eq(cpuset_count(&policy_pinning(e.P, id)->mems), 1,
		    "%s is spread", id);
	}
	cr_assert_eq(on[0], 2);
	cr_assert_eq(on[1], 2);
}
