/*
 * test_budget.c: the node's budget of kept metadata (POLICY_META_BUDGET).
 * The sum the policy keeps equals one made from scratch after creates,
 * updates, removals, Synchronizes, restores and their undos; at the
 * budget a create keeps no labels or is refused, a running container is
 * trimmed, never refused, and a restored state past it is kept whole;
 * and the largest state text the daemon can write is well below what it
 * reads back. On the recorded server with CPUs 3 and 11 reserved.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "policy_priv.h"
#include "jrec.h"
#include "policylib.h"
#include "statefile.h"
#include "testlib.h"
#include "textbuf.h"
#include "xmalloc.h"

ENV_SERVER_SUITE()

/* A string of n copies of c. */
static char *
fill(int c, size_t n)
{
	char	*s = xmalloc(n + 1);

	memset(s, c, n);
	s[n] = '\0';
	return (s);
}

/*
 * A container of its own pod: nann annotations of ours and nlab labels,
 * each value vlen bytes of c (\001 escapes to 6 bytes of text).
 */
struct spec {
	struct container_spec	 s;
	struct policy_kv	 ann[POLICY_MAX_ANNOTATIONS];
	struct policy_kv	 lab[POLICY_MAX_LABELS];
	char			 id[64], pod[64];
};

static void
spec_make(struct spec *sp, const char *id, int nann, int nlab, int c,
    size_t vlen)
{
	int	i;

	memset(sp, 0, sizeof *sp);
	snprintf(sp->id, sizeof sp->id, "%s", id);
	snprintf(sp->pod, sizeof sp->pod, "pod-%s", id);
	sp->s.id = sp->id;
	sp->s.name = "c";
	sp->s.pod = sp->pod;
	sp->s.namespace = "default";
	sp->s.qos = QOS_BESTEFFORT;
	sp->s.cpu_request = sp->s.cpu_limit = -1;
	for (i = 0; i < nann; i++) {
		xasprintf(&sp->ann[i].key, "k%d.%s", i, ANNOTATION_NS);
		sp->ann[i].value = fill(c, vlen);
	}
	for (i = 0; i < nlab; i++) {
		xasprintf(&sp->lab[i].key, "l%d", i);
		sp->lab[i].value = fill(c, vlen);
	}
	sp->s.annotations = sp->ann;
	sp->s.nannotations = nann;
	sp->s.labels = sp->lab;
	sp->s.nlabels = nlab;
}

static void
spec_free(struct spec *sp)
{
	int	i;

	for (i = 0; i < sp->s.nannotations; i++) {
		free(sp->ann[i].key);
		free(sp->ann[i].value);
	}
	for (i = 0; i < sp->s.nlabels; i++) {
		free(sp->lab[i].key);
		free(sp->lab[i].value);
	}
}

static int
create(struct policy *P, struct spec *sp)
{
	env_reset(&e);
	return (policy_create(P, &sp->s, &e.fx, &e.cause));
}

/* The sum made from scratch: every container's metadata walked again. */
static size_t
kept_from_scratch(const struct policy *P)
{
	struct grant	**v;
	size_t		  i, n, sum = 0;

	v = policy_sorted(P->ctrs, &n);
	for (i = 0; i < n; i++)
		sum += cspec_cost(&v[i]->spec);
	free(v);
	return (sum);
}

static void
check_sum(const struct policy *P)
{
	cr_assert_eq(policy_kept_bytes(P), kept_from_scratch(P),
	    "kept %zu, from scratch %zu", policy_kept_bytes(P),
	    kept_from_scratch(P));
}

/* A hostile container: every annotation of ours at the per-container
 * cap, all control characters. */
static void
hostile(struct spec *sp, const char *id)
{
	spec_make(sp, id, 32, 16, '\001', POLICY_MAX_KEPT_BYTES / 2 / 32 - 16);
}

TestSuite(budget, .init = env_setup, .fini = env_teardown);

/* What a container costs is exactly what its metadata adds to the text. */
Test(budget, cost_is_the_text)
{
	struct spec	 a, b;
	char		*t0, *t1;
	size_t		 n0, n1;

	spec_make(&a, "c1", 0, 0, 'x', 0);
	spec_make(&b, "c1", 3, 2, '\001', 10);
	b.ann[1].value[3] = '"';
	cr_assert_eq(create(e.P, &a), 0, "%s", e.cause);
	t0 = policy_save_text(e.P, &n0);
	cr_assert_eq(create(e.P, &b), 0, "%s", e.cause);
	t1 = policy_save_text(e.P, &n1);
	/* Labels add ,"labels":{} around theirs, the last entry no comma. */
	cr_assert_eq(n1 - n0, policy_kept_bytes(e.P) - 2 + 12, "%zu %zu",
	    n1 - n0, policy_kept_bytes(e.P));
	check_sum(e.P);
	free(t0);
	free(t1);
	spec_free(&a);
	spec_free(&b);
}

/* Every operation keeps the sum exact, and its undo puts it back. */
Test(budget, accounting_exact_through_undo)
{
	struct container_spec	 all[3];
	struct spec		 a, b, c, a2;
	size_t			 before;

	spec_make(&a, "a", 4, 3, '\001', 100);
	spec_make(&b, "b", 1, 0, 'y', 1000);
	spec_make(&c, "c", 0, 5, '\n', 50);
	spec_make(&a2, "a", 1, 1, 'z', 5);
	cr_assert_eq(create(e.P, &a), 0, "%s", e.cause);
	check_sum(e.P);
	cr_assert_eq(create(e.P, &b), 0, "%s", e.cause);
	check_sum(e.P);

	/* A repeated create replaces a's metadata; undone, a's is back. */
	before = policy_kept_bytes(e.P);
	cr_assert_eq(create(e.P, &a2), 0, "%s", e.cause);
	check_sum(e.P);
	cr_assert_neq(policy_kept_bytes(e.P), before);
	policy_undo(e.P, &e.fx);
	cr_assert_eq(policy_kept_bytes(e.P), before);
	check_sum(e.P);

	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "b", 500, 1000, -1, &e.fx, &e.cause), 0);
	check_sum(e.P);
	policy_undo(e.P, &e.fx);
	cr_assert_eq(policy_kept_bytes(e.P), before);

	cr_assert_eq(env_remove(&e, "b"), 0);
	check_sum(e.P);
	cr_assert_lt(policy_kept_bytes(e.P), before);
	policy_undo(e.P, &e.fx);
	cr_assert_eq(policy_kept_bytes(e.P), before);
	check_sum(e.P);

	/* A sync: a relabeled, b gone, c new; undone, all as before. */
	a.s.nlabels = 1;
	all[0] = a.s;
	all[1] = c.s;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, all, 2, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	check_sum(e.P);
	cr_assert_not_null(strmap_get(e.P->ctrs, "c"));
	policy_undo(e.P, &e.fx);
	cr_assert_eq(policy_kept_bytes(e.P), before);
	check_sum(e.P);
	a.s.nlabels = 3;
	spec_free(&a);
	spec_free(&b);
	spec_free(&c);
	spec_free(&a2);
}

/*
 * Fills the budget with hostile containers until one is refused, then
 * with one that leaves less than 128 bytes; returns how many hostile
 * ones fit.
 */
static int
fill_budget(struct policy *P)
{
	struct spec	 h;
	char		 id[32];
	size_t		 room;
	int		 i, rc = 0;

	for (i = 0; rc == 0; i++) {
		snprintf(id, sizeof id, "hostile%03d", i);
		hostile(&h, id);
		rc = create(P, &h);
		spec_free(&h);
		cr_assert_leq(policy_kept_bytes(P), POLICY_META_BUDGET);
		cr_assert_lt(i, 1000);
	}
	cr_assert_eq(rc, -ENOSPC);
	cr_assert_not_null(strstr(e.cause, "POLICY_META_BUDGET"), "%s",
	    e.cause);
	/* One annotation of \001s: 6 bytes each, 31 around them. */
	room = POLICY_META_BUDGET - policy_kept_bytes(P);
	spec_make(&h, "filler", 1, 0, '\001', (room - 31 - 100) / 6);
	cr_assert_eq(create(P, &h), 0, "%s", e.cause);
	spec_free(&h);
	room = POLICY_META_BUDGET - policy_kept_bytes(P);
	cr_assert(room >= 100 && room < 128, "%zu", room);
	return (i - 1);
}

/*
 * At the budget: a create with annotations of ours is refused, naming
 * the limit; one with labels only keeps none and is recorded trimmed; a
 * running container new to a Synchronize keeps nothing but is placed;
 * the state reads back the same, trimmed and all.
 */
Test(budget, at_the_budget)
{
	struct container_spec	*all;
	struct grant		**v, *g;
	struct spec		 s1, s2, s3;
	json_t			*doc;
	struct policy		*R;
	char			*t1, *t2, *why = NULL;
	size_t			 i, n;
	int			 held;

	held = fill_budget(e.P);
	cr_assert_gt(held, 10);
	check_sum(e.P);

	/* Annotations of ours that do not fit: refused, naming the limit. */
	spec_make(&s1, "small", 1, 0, 'x', 200);
	cr_assert_eq(create(e.P, &s1), -ENOSPC);
	cr_assert_not_null(strstr(e.cause, "POLICY_META_BUDGET"), "%s",
	    e.cause);
	cr_assert_null(strmap_get(e.P->ctrs, "small"));
	check_sum(e.P);
	spec_free(&s1);

	/* Labels only: placed without them, recorded trimmed. */
	spec_make(&s1, "labels-only", 0, 4, 'x', 100);
	cr_assert_eq(create(e.P, &s1), 0, "%s", e.cause);
	g = strmap_get(e.P->ctrs, "labels-only");
	cr_assert(g->spec.trimmed);
	cr_assert_eq(g->spec.nlabels, 0);
	cr_assert_eq(e.fx.nwarnings, 1);
	cr_assert_not_null(strstr(e.fx.warnings[0], "POLICY_META_BUDGET"));
	check_sum(e.P);

	/* Everything held plus two running ones the runtime lists. */
	spec_make(&s2, "running", 3, 3, '\001', 1000);
	spec_make(&s3, "plain", 0, 0, 'x', 0);
	n = (size_t)policy_ncontainers(e.P);
	all = xcalloc(n + 2, sizeof *all);
	v = policy_sorted(e.P->ctrs, &n);
	for (i = 0; i < n; i++) {
		all[i].id = v[i]->key;
		all[i].qos = QOS_BESTEFFORT;
		all[i].cpu_request = all[i].cpu_limit = -1;
	}
	all[n] = s2.s;
	all[n + 1] = s3.s;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, all, (int)n + 2, &e.fx, &e.cause), 0,
	    "%s", e.cause);
	/* The event is written from the policy's copies of the new ones it
	 * kept whole, and is the event made from copies of its own: the
	 * trimmed one and the known ones have no copy to give. */
	for (i = 0; i < n; i++)
		cr_assert_null(e.fx.read[i], "known %s", all[i].id);
	cr_assert_null(e.fx.read[n], "running was trimmed");
	cr_assert_not_null(e.fx.read[n + 1], "plain");
	t1 = event_sync(all, (int)n + 2, e.fx.read);
	t2 = event_sync(all, (int)n + 2, NULL);
	cr_assert_str_eq(t1, t2);
	free(t1);
	free(t2);
	free(v);
	free(all);
	g = strmap_get(e.P->ctrs, "running");
	cr_assert_not_null(g);
	cr_assert(g->spec.trimmed);
	cr_assert_eq(g->spec.nann + g->spec.nenv + g->spec.nlabels, 0);
	cr_assert_eq(cspec_cost(&g->spec), 0);
	cr_assert_not_null(strmap_get(e.P->ctrs, "plain"));
	cr_assert_not_null(strmap_get(e.P->ctrs, "hostile000"));
	check_sum(e.P);
	cr_assert_leq(policy_kept_bytes(e.P), POLICY_META_BUDGET);

	/* Restored as it was: same text, same sum. */
	t1 = policy_save_text(e.P, NULL);
	cr_assert_not_null(strstr(t1, "\"trimmed\":true"));
	doc = json_loads(t1, 0, NULL);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &why), 0, "%s",
	    why);
	t2 = policy_save_text(R, NULL);
	cr_assert_str_eq(t1, t2);
	cr_assert_eq(policy_kept_bytes(R), policy_kept_bytes(e.P));
	check_sum(R);
	policy_free(R);
	json_decref(doc);
	free(t1);
	free(t2);
	spec_free(&s1);
	spec_free(&s2);
	spec_free(&s3);
}

/*
 * A state an older version wrote, past the budget, is restored whole; a
 * new container with annotations is then refused, one without metadata
 * placed; removing containers makes room again.
 */
/* A Synchronize's event, written from the copies the policy made of the
 * containers it had not known, is the one written from copies of its
 * own: folded kubelet labels, cleaned strings, annotations and variables
 * kept or left out alike. */
Test(budget, sync_event_from_the_policy_copies)
{
	static const struct policy_kv	 lab[] = {
		{ (char *)"io.kubernetes.container.name", (char *)"c" },
		{ (char *)"io.kubernetes.pod.name", (char *)"not-the-pod" },
		{ (char *)"app", (char *)"x\xff\"y" },
	};
	static const struct policy_kv	 ann[] = {
		{ (char *)"memory-type." ANNOTATION_NS, (char *)"dram" },
		{ (char *)"other.example.com", (char *)"left out" },
	};
	static const struct policy_kv	 env[] = {
		{ (char *)"DRA_CPUSET_u1", (char *)"0-3" },
		{ (char *)"PATH", (char *)"/bin" },
	};
	struct spec			 a, b;
	struct container_spec		 all[3];
	char				*t1, *t2;
	int				 i;

	spec_make(&a, "a", 2, 3, '\001', 40);
	spec_make(&b, "b", 0, 0, 'x', 0);
	all[0] = a.s;
	all[1] = b.s;
	all[2] = b.s;
	all[2].id = "c";
	all[2].pod = "pod-c";
	all[2].pod_name = "web-\xc3\xa9";
	all[2].labels = lab;
	all[2].nlabels = 3;
	all[2].annotations = ann;
	all[2].nannotations = 2;
	all[2].env = env;
	all[2].nenv = 2;
	all[2].qos = QOS_GUARANTEED;
	all[2].cpu_request = all[2].cpu_limit = 1000;
	all[2].mem_limit = 1 << 30;
	env_reset(&e);
	cr_assert_eq(policy_sync(e.P, all, 3, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	for (i = 0; i < 3; i++)
		cr_assert_not_null(e.fx.read[i], "container %d", i);
	t1 = event_sync(all, 3, e.fx.read);
	t2 = event_sync(all, 3, NULL);
	cr_assert_str_eq(t1, t2);
	cr_assert_not_null(strstr(t1, "\"kubeLabels\":1"), "%s", t1);
	free(t1);
	free(t2);
	spec_free(&a);
	spec_free(&b);
}

Test(budget, restored_past_the_budget)
{
	struct spec	 h, p;
	struct policy	*R;
	json_t		*doc, *grants, *g, *spec;
	char		*t, *why = NULL, key[32];
	size_t		 kept;
	int		 i, held;

	held = fill_budget(e.P);
	t = policy_save_text(e.P, NULL);
	doc = json_loads(t, 0, NULL);
	free(t);
	/* Written before the budget: twice as many. */
	grants = json_object_get(doc, "grants");
	for (i = 0; i < held; i++) {
		snprintf(key, sizeof key, "hostile%03d", i);
		g = json_deep_copy(json_object_get(grants, key));
		spec = json_object_get(g, "container");
		json_object_set_new(spec, "pod", json_string(key));
		snprintf(key, sizeof key, "older%03d", i);
		json_object_set_new(grants, key, g);
	}
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &why), 0, "%s",
	    why);
	json_decref(doc);
	cr_assert_eq(policy_ncontainers(R), 2 * held + 1);
	kept = policy_kept_bytes(R);
	cr_assert_gt(kept, POLICY_META_BUDGET);
	check_sum(R);

	hostile(&h, "new");
	cr_assert_eq(create(R, &h), -ENOSPC);
	spec_make(&p, "plain", 0, 0, 'x', 0);
	cr_assert_eq(create(R, &p), 0, "%s", e.cause);
	cr_assert_eq(policy_kept_bytes(R), kept);
	/* Room again once enough are gone. */
	for (i = 0; i < held; i++) {
		snprintf(key, sizeof key, "older%03d", i);
		env_reset(&e);
		cr_assert_eq(policy_remove(R, key, &e.fx), 0);
	}
	check_sum(R);
	for (i = 0; i < 2; i++) {
		snprintf(key, sizeof key, "hostile%03d", i);
		env_reset(&e);
		cr_assert_eq(policy_remove(R, key, &e.fx), 0);
	}
	cr_assert_eq(create(R, &h), 0, "%s", e.cause);
	check_sum(R);
	policy_free(R);
	spec_free(&h);
	spec_free(&p);
}

/*
 * The largest state text: every container at POLICY_MAX_CONTAINERS with
 * the longest id and names (control characters, cut at POLICY_MAX_NAME)
 * and the kubelet's labels copying them, the budget filled with hostile
 * metadata, built and rendered; every claim at its caps, measured on one
 * and counted POLICY_MAX_CLAIMS times (claims need CPUs of their own).
 * It must stay well below what statefile_read accepts.
 */
Test(budget, worst_case_state_fits_the_read_limit, .timeout = 300)
{
	struct claim_result	 res = { "cpudevnuma000", "1" };
	struct claim_meta	 meta;
	struct spec		 sp;
	struct policy_kv	 kl[4];
	const char		*pods[POLICY_MAX_CONSUMERS];
	char			*name, *id, *uid, *ns, *cname, *t;
	size_t			 len, before, claim, cpus_text, total, plen;
	int			 i, held;

	held = fill_budget(e.P);
	name = fill('\001', POLICY_MAX_NAME / 6 + 1);	/* cut to 42 */
	name[POLICY_MAX_NAME / 6] = '\0';
	kl[0].key = "io.kubernetes.container.name";
	kl[1].key = "io.kubernetes.pod.name";
	kl[2].key = "io.kubernetes.pod.namespace";
	kl[3].key = "io.kubernetes.pod.uid";
	for (i = 0; i < 4; i++)
		kl[i].value = name;
	id = fill('i', POLICY_MAX_ID);
	for (i = held + 1; i < POLICY_MAX_CONTAINERS; i++) {	/* and the filler */
		spec_make(&sp, "", 0, 0, 'x', 0);
		snprintf(id, POLICY_MAX_ID + 1, "%0*d", POLICY_MAX_ID, i);
		sp.s.id = id;
		sp.s.name = sp.s.pod = sp.s.pod_uid = sp.s.pod_name =
		    sp.s.namespace = name;
		sp.s.labels = kl;
		sp.s.nlabels = 4;
		env_reset(&e);
		cr_assert_eq(policy_create(e.P, &sp.s, &e.fx, &e.cause), 0,
		    "%s", e.cause);
	}
	cr_assert_eq(policy_ncontainers(e.P), POLICY_MAX_CONTAINERS);
	check_sum(e.P);
	t = policy_save_text(e.P, &before);
	free(t);

	/* One claim at its caps. */
	uid = fill('u', 128);
	ns = fill('n', 253);
	cname = fill('m', 253);
	for (i = 0; i < POLICY_MAX_CONSUMERS; i++) {
		xasprintf(&t, "%0128d", i);
		pods[i] = t;
	}
	memset(&meta, 0, sizeof meta);
	meta.ns = ns;
	meta.name = cname;
	meta.pods = pods;
	meta.npods = POLICY_MAX_CONSUMERS;
	meta.known = 1;
	env_reset(&e);
	cr_assert_eq(policy_claim(e.P, uid, &res, 1, &meta, &e.fx, &e.cause),
	    0, "%s", e.cause);
	t = policy_save_text(e.P, &len);
	free(t);
	/* Its CPUs' text, "1", counted below with everyone's. */
	claim = len - before - 1 + 16;	/* "results":128 */
	/*
	 * CPUs: those of claims and exclusive containers are disjoint, so
	 * their lists together are at most every CPU written alone.
	 */
	cpus_text = (size_t)CPUSET_SETSIZE * 5 * 2;
	/*
	 * What a BestEffort container in this pool writes shorter than
	 * the longest: numbers of 7 digits ("cpuRequest", "cpuLimit",
	 * "portion"), "reserved" and the longest pool name.
	 */
	for (i = 0, plen = 0; i < pool_tree_count(e.P->tree); i++)
		if (strlen(pool_tree_get(e.P->tree, i)->name) > plen)
			plen = strlen(pool_tree_get(e.P->tree, i)->name);
	total = before + (size_t)POLICY_MAX_CONTAINERS * (3 * 7 + 8 + plen) +
	    (size_t)POLICY_MAX_CLAIMS * (claim + plen) + cpus_text +
	    1024 * 1024 /* the config, SERVER_CONFIG_MAX */ + 64;
	fprintf(stderr, "worst-case state text: %zu bytes (%zu MiB) of "
	    "containers, %zu per claim, %zu MiB in all; read limit %d MiB\n",
	    before, before >> 20, claim, total >> 20,
	    STATEFILE_MAX_SIZE >> 20);
	/* Well below: half the read limit. A Synchronize's journal record
	 * holds every grant and its event, whose metadata the budget bounds
	 * too: less than twice the state. */
	cr_assert_lt(total, STATEFILE_MAX_SIZE / 2);
	cr_assert_lt(2 * total, JREC_MAX_PAYLOAD);
	for (i = 0; i < POLICY_MAX_CONSUMERS; i++)
		free((char *)pods[i]);
	free(uid);
	free(ns);
	free(cname);
	free(name);
	free(id);
}
