/*
 * test_moves.c: what a reconfiguration moved (policy_moves), read before
 * it is undone, as a dry run of a reload does: the containers whose
 * pinning or pool changes, from where to where, and exactly what the
 * reconfiguration committed gives; claims never move; the undo leaves the
 * saved state text byte for byte as it was. On the recorded server with
 * CPUs 3 and 11 reserved.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

ENV_SERVER_SUITE()

TestSuite(moves, .init = env_setup, .fini = env_teardown);

static void
create(const char *id, const char *qos, long long req)
{
	cr_assert_eq(env_create(&e, id, qos, req, req, NULL, NULL, NULL), 0,
	    "create %s: %s", id, e.cause);
	env_reset(&e);
}

static struct config *
parse(const char *text)
{
	struct config	*cfg;
	char		*cause = NULL;

	cr_assert_eq(config_parse(text, strlen(text), &cfg, &cause), 0, "%s",
	    cause);
	return (cfg);
}

/* The grants entry of key in policy_grants_json, without its key. */
static json_t *
grant_of(json_t *grants, const char *key)
{
	json_t	*o, *p;
	size_t	 i;

	json_array_foreach(grants, i, o) {
		if (strcmp(json_string_value(json_object_get(o, "id")), key)
		    != 0)
			continue;
		p = json_deep_copy(o);
		json_object_del(p, "id");
		return (p);
	}
	return (NULL);
}

/* A config that reserves one more CPU, one the shared containers use. */
static char *
reserve_shared(int *extra)
{
	const struct pinning	*p = policy_pinning(e.P, "be1");
	char			*text;

	cr_assert_not_null(p);
	*extra = cpuset_first(&p->cpus);
	cr_assert_geq(*extra, 0);
	xasprintf(&text, "{\"reservedResources\":{\"cpu\":\"cpuset:3,11,%d\"}}",
	    *extra);
	return (text);
}

Test(moves, a_dry_reconfigure_reports_and_is_undone)
{
	struct config	*cfg;
	json_t		*before, *after, *moves, *m, *from, *want;
	char		*text, *state, *snap, *state2, *snap2;
	const char	*id;
	size_t		 i;
	int		 extra, j, seen;

	create("be1", "BE", -1);
	create("bu1", "BU", 500);
	create("g1", "G", 2000);
	cr_assert_eq(env_claim(&e, "c1", "cpudevnuma001=2"), 0, "%s",
	    e.cause);
	env_reset(&e);
	text = reserve_shared(&extra);
	cfg = parse(text);
	before = policy_grants_json(e.P);
	state = policy_save_text(e.P, NULL);
	snap = env_snapshot(&e);

	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	moves = policy_moves(e.P, &e.fx);
	cr_assert_not_null(moves);
	after = policy_grants_json(e.P);
	/* Claims are carried first with their CPUs: they never move. */
	cr_assert_eq(json_array_size(json_object_get(moves, "claims")), 0);
	/* The containers the runtime is told of, and only those, each from
	 * where it was to where it is now. */
	cr_assert_eq(json_array_size(json_object_get(moves, "containers")),
	    (size_t)e.fx.nupdates);
	cr_assert_gt(e.fx.nupdates, 0);
	json_array_foreach(json_object_get(moves, "containers"), i, m) {
		id = json_string_value(json_object_get(m, "id"));
		for (seen = 0, j = 0; j < e.fx.nupdates; j++)
			seen += strcmp(e.fx.updates[j].id, id) == 0;
		cr_assert_eq(seen, 1, "%s moved without an update", id);
		from = grant_of(before, id);
		want = grant_of(after, id);
		cr_assert(json_equal(json_object_get(m, "from"), from), "%s",
		    id);
		cr_assert(json_equal(json_object_get(m, "to"), want), "%s", id);
		json_decref(from);
		json_decref(want);
	}
	cr_assert_null(grant_of(json_object_get(moves, "containers"), "g1"),
	    "an exclusive container stays");

	/* Undone instead of committed: the state text, byte for byte. */
	policy_undo(e.P, &e.fx);
	env_reset(&e);
	state2 = policy_save_text(e.P, NULL);
	snap2 = env_snapshot(&e);
	cr_assert_str_eq(state2, state);
	cr_assert_str_eq(snap2, snap);
	free(state2);
	free(snap2);

	/* Committed, the same config gives what the dry run said. */
	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0);
	json_decref(after);
	after = policy_grants_json(e.P);
	json_array_foreach(json_object_get(moves, "containers"), i, m) {
		id = json_string_value(json_object_get(m, "id"));
		want = grant_of(after, id);
		cr_assert(json_equal(json_object_get(m, "to"), want), "%s", id);
		json_decref(want);
	}
	env_reset(&e);
	json_decref(moves);
	json_decref(before);
	json_decref(after);
	config_free(cfg);
	free(text);
	free(state);
	free(snap);
}

/* Only the grants that change: a config that moves nothing reports none. */
Test(moves, nothing_moves)
{
	struct config	*cfg;
	json_t		*moves;

	create("be1", "BE", -1);
	create("g1", "G", 2000);
	cfg = parse("{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"},"
	    "\"preferSharedCPUs\":false}");
	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0);
	moves = policy_moves(e.P, &e.fx);
	cr_assert_eq(json_array_size(json_object_get(moves, "containers")),
	    0);
	cr_assert_eq(json_array_size(json_object_get(moves, "claims")), 0);
	policy_undo(e.P, &e.fx);
	env_reset(&e);
	json_decref(moves);
	config_free(cfg);
}

/* An operation that did not replace the state has nothing to compare. */
Test(moves, none_without_a_swap)
{
	cr_assert_eq(env_create(&e, "be1", "BE", -1, -1, NULL, NULL, NULL),
	    0);
	cr_assert_null(policy_moves(e.P, &e.fx));
	env_reset(&e);
}

/* A config that takes a claim's CPU is refused whole, leaving no trace. */
Test(moves, a_refused_reconfigure_changes_nothing)
{
	const struct cpuset	*c;
	struct config		*cfg;
	char			*text, *state, *state2;

	create("be1", "BE", -1);
	cr_assert_eq(env_claim(&e, "c1", "cpudevnuma001=2"), 0, "%s",
	    e.cause);
	env_reset(&e);
	c = policy_claim_cpus(e.P, "c1");
	xasprintf(&text, "{\"reservedResources\":{\"cpu\":\"cpuset:%d\"}}",
	    cpuset_first(c));
	cfg = parse(text);
	state = policy_save_text(e.P, NULL);
	cr_assert_neq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0);
	cr_assert_not_null(strstr(e.cause, "c1"), "%s", e.cause);
	cr_assert_null(policy_moves(e.P, &e.fx));
	state2 = policy_save_text(e.P, NULL);
	cr_assert_str_eq(state2, state);
	env_reset(&e);
	config_free(cfg);
	free(text);
	free(state);
	free(state2);
}

/* Whether name is in the effects' pools, and only once. */
static int
pool_named(const char *name)
{
	int	i, n = 0;

	for (i = 0; i < e.fx.npools; i++)
		n += strcmp(e.fx.pools[i], name) == 0;
	cr_assert_leq(n, 1, "pool %s named twice", name);
	return (n);
}

/*
 * A claim moves the shared containers by their pools' supply alone: one
 * whose resources.sh is its pool's file is marked so and its pool named
 * once; one with a file of its own (a share beside an exclusive CPU) is
 * not. A reconfiguration moves everything as new: none is marked.
 */
Test(moves, pool_file_updates)
{
	const struct pool	*p;
	struct config		*cfg;
	char			*text;
	int			 i, marked = 0, own = 0, extra;

	create("be1", "BE", -1);
	create("be2", "BE", -1);
	create("bu1", "BU", 500);
	create("mix", "G", 1500);
	cr_assert_eq(env_claim(&e, "c1", "cpudevnuma000=2"), 0, "%s",
	    e.cause);
	cr_assert_gt(e.fx.nupdates, 0);
	for (i = 0; i < e.fx.nupdates; i++) {
		p = policy_export_shared_pool(e.P, e.fx.updates[i].id);
		cr_assert_eq(e.fx.updates[i].pool_file, p != NULL, "%s",
		    e.fx.updates[i].id);
		if (p != NULL)
			cr_assert(pool_named(p->name), "%s's pool %s",
			    e.fx.updates[i].id, p->name);
		marked += e.fx.updates[i].pool_file;
		own += strcmp(e.fx.updates[i].id, "mix") == 0;
	}
	cr_assert_geq(marked, 2, "the BestEffort containers moved by pool");
	cr_assert_eq(own, 1, "the mixed container moved too");
	cr_assert_not_null(env_update(&e, "mix"));
	cr_assert_gt(e.fx.npools, 0);
	for (i = 0; i < e.fx.npools; i++)
		cr_assert_not_null(pool_tree_find(policy_tree(e.P),
		    e.fx.pools[i]));
	env_reset(&e);

	text = reserve_shared(&extra);
	cfg = parse(text);
	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert_gt(e.fx.nupdates, 0);
	for (i = 0; i < e.fx.nupdates; i++)
		cr_assert_eq(e.fx.updates[i].pool_file, 0, "%s",
		    e.fx.updates[i].id);
	cr_assert_eq(e.fx.npools, 0);
	env_reset(&e);
	config_free(cfg);
	free(text);
}

/* Whether a warning of the last event names id and says it falls back. */
static int
warned_fallback(const char *id)
{
	char	*who;
	int	 i, found = 0;

	xasprintf(&who, "container %s:", id);
	for (i = 0; i < e.fx.nwarnings; i++)
		if (strstr(e.fx.warnings[i], who) != NULL &&
		    strstr(e.fx.warnings[i], "it shares the root pool's CPUs")
		    != NULL)
			found = 1;
	free(who);
	return (found);
}

/*
 * R-CONF-3: only a claim that cannot be reinstated refuses a reload. A
 * container the runtime runs that no pool can take as it asks (here more
 * CPUs than the machine has) shares the root pool's CPUs after a
 * Synchronize, and every reload after that carries it so again: with a
 * warning, the runtime's pinning kept (no update unless the root pool's
 * CPUs change), and the rest of the reload done.
 */
Test(moves, a_container_that_cannot_be_placed_does_not_refuse_a_reload)
{
	struct container_spec	 specs[2];
	struct config		*cfg;
	char			*state;
	int			 i;

	memset(specs, 0, sizeof specs);
	specs[0].id = "be1";
	specs[0].qos = QOS_BESTEFFORT;
	specs[0].cpu_request = specs[0].cpu_limit = -1;
	specs[1].id = "huge";
	specs[1].qos = QOS_GUARANTEED;
	specs[1].cpu_request = specs[1].cpu_limit = 400000;
	cr_assert_eq(policy_sync(e.P, specs, 2, &e.fx, &e.cause), 0, "%s",
	    e.cause);
	cr_assert(warned_fallback("huge"));
	for (i = 0; i < 2; i++) {
		env_reset(&e);
		cfg = parse(i == 0 ? "{\"reservedResources\":{\"cpu\":"
		    "\"cpuset:3,11\"},\"colocatePods\":true}" :
		    "{\"reservedResources\":{\"cpu\":\"cpuset:3,9,11\"}}");
		cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0,
		    "reload %d refused: %s", i, e.cause);
		config_free(cfg);
		cr_assert(warned_fallback("huge"), "reload %d", i);
		/* The first leaves the root pool's CPUs as they were: the
		 * runtime has its pinning. The second reserves one of them. */
		if (i == 0)
			cr_assert_null(env_update(&e, "huge"), "an update for "
			    "a pinning the runtime has");
		else {
			cr_assert_not_null(env_update(&e, "huge"));
			cr_assert(!cpuset_has(&policy_pinning(e.P,
			    "huge")->cpus, 9));
		}
		state = policy_save_text(e.P, NULL);
		cr_assert_not_null(strstr(state, "\"fallback\":true"));
		free(state);
	}
	/* The second reload was done: CPU 9 is reserved now. */
	testlib_assert_set(pool_tree_reserved(policy_tree(e.P)), "3,9,11");
}

/*
 * A container placed as it asked that the new config cannot place so
 * (its exclusive CPUs left out of what the node offers, too few left for
 * it) falls back too, and moves to the root pool's shared CPUs.
 */
Test(moves, a_container_the_new_config_cannot_place_falls_back)
{
	const struct pinning	*p;
	struct config		*cfg;

	create("g", "G", 4000);
	p = policy_pinning(e.P, "g");
	cr_assert_not_null(p);
	cr_assert_eq(cpuset_count(&p->cpus), 4);
	cfg = parse("{\"reservedResources\":{\"cpu\":\"cpuset:3\"},"
	    "\"availableResources\":{\"cpu\":\"cpuset:0-3\"}}");
	cr_assert_eq(policy_reconfigure(e.P, cfg, &e.fx, &e.cause), 0,
	    "reload refused: %s", e.cause);
	config_free(cfg);
	cr_assert(warned_fallback("g"));
	cr_assert_not_null(env_update(&e, "g"));
	p = policy_pinning(e.P, "g");
	cr_assert_not_null(p);
	testlib_assert_set(&p->cpus, "0-2");
}

/*
 * The same at a start: a saved container the config in force cannot
 * place (the config changed while the daemon was down) falls back, said
 * in a warning; the claims and every other grant are restored, not the
 * whole state set aside for it (which dropped the claims).
 */
Test(moves, a_saved_container_that_no_longer_fits_does_not_refuse_a_start)
{
	struct policy	*R = NULL;
	struct config	*cfg;
	json_t		*doc;
	char		**w = NULL, *state;
	int		 nw = 0, i, warned = 0;

	cr_assert_eq(env_claim(&e, "c1", "cpudevnuma001=2"), 0, "%s",
	    e.cause);
	create("g", "G", 8000);
	create("be1", "BE", -1);
	doc = policy_save(e.P);
	/* Eight CPUs offered, one reserved, two claimed: five left. */
	cfg = parse("{\"reservedResources\":{\"cpu\":\"cpuset:3\"},"
	    "\"availableResources\":{\"cpu\":\"cpuset:0-3,56-59\"}}");
	cr_assert_eq(policy_restore_warn(e.topo, cfg, doc, &R, &w, &nw,
	    &e.cause), 0, "restore refused: %s", e.cause);
	for (i = 0; i < nw; i++) {
		if (strstr(w[i], "container g:") != NULL &&
		    strstr(w[i], "it shares the root pool's CPUs") != NULL)
			warned = 1;
		free(w[i]);
	}
	free(w);
	cr_assert(warned, "no warning for g");
	cr_assert_eq(policy_ncontainers(R), 2);
	cr_assert(cpuset_equal(policy_claim_cpus(R, "c1"),
	    policy_claim_cpus(e.P, "c1")));
	state = policy_save_text(R, NULL);
	cr_assert_not_null(strstr(state, "\"fallback\":true"), "%s", state);
	free(state);
	policy_free(R);
	config_free(cfg);
	json_decref(doc);
}
