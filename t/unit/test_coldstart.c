/*
 * test_coldstart.c: the Go policy's cold start. Durations as Go's
 * time.ParseDuration reads them (cases from Go's own table), the
 * annotation's YAML, and the Go policy's coldstart_test machine: a DRAM
 * node with the CPUs and a PMEM node; a container of "pmem,dram" with a
 * cold start of 1s gets PMEM only, and DRAM once it has run a second.
 * Its deadline survives a restart, an update and a reload, and every
 * step is undone whole.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "policylib.h"
#include "testlib.h"
#include "xmalloc.h"

#define MS	1000000LL	/* ns */
#define SEC	(1000 * MS)
#define MIN	(60 * SEC)
#define HOUR	(60 * MIN)

Test(duration, go_parse_duration_table)
{
	static const struct {
		const char	*in;
		long long	 ns;
	} ok[] = {
		{ "0", 0 }, { "5s", 5 * SEC }, { "30s", 30 * SEC },
		{ "1478s", 1478 * SEC }, { "-5s", -5 * SEC },
		{ "+5s", 5 * SEC }, { "-0", 0 }, { "+0", 0 },
		{ "5.0s", 5 * SEC }, { "5.6s", 5 * SEC + 600 * MS },
		{ "5.s", 5 * SEC }, { ".5s", 500 * MS }, { "1.0s", SEC },
		{ "1.00s", SEC }, { "1.004s", SEC + 4 * MS },
		{ "1.0040s", SEC + 4 * MS }, { "100.00100s", 100 * SEC + MS },
		{ "10ns", 10 }, { "11us", 11000 }, { "12\xc2\xb5s", 12000 },
		{ "12\xce\xbcs", 12000 }, { "13ms", 13 * MS },
		{ "14s", 14 * SEC }, { "15m", 15 * MIN }, { "16h", 16 * HOUR },
		{ "3h30m", 3 * HOUR + 30 * MIN },
		{ "10.5s4m", 4 * MIN + 10 * SEC + 500 * MS },
		{ "-2m3.4s", -(2 * MIN + 3 * SEC + 400 * MS) },
		{ "1h2m3s4ms5us6ns", HOUR + 2 * MIN + 3 * SEC + 4 * MS +
		    5000 + 6 },
		{ "0.3333333333333333333h", 20 * MIN },
	};
	static const char *const bad[] = {
		"", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "1.5x",
		"2h 3m", "1e3s", "48h",
	};
	long long	ns;
	char		*why;
	size_t		i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		why = NULL;
		cr_assert_eq(coldstart_parse_duration(ok[i].in, &ns, &why), 0,
		    "%s: %s", ok[i].in, why ? why : "");
		/* Decimal fractions to the nanosecond, as Go rounds them. */
		cr_assert(ns >= ok[i].ns - 1 && ns <= ok[i].ns + 1,
		    "%s: %lld, not %lld", ok[i].in, ns, ok[i].ns);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why = NULL;
		cr_assert_neq(coldstart_parse_duration(bad[i], &ns, &why), 0,
		    "%s read as %lld", bad[i], ns);
		cr_assert_not_null(why);
		free(why);
	}
}

Test(duration, annotation_yaml)
{
	static const struct {
		const char	*in;
		long long	 ms;	/* -1: refused */
	} cases[] = {
		{ "duration: 60s", 60000 }, { "duration: 60s\n", 60000 },
		{ "duration: \"1m30s\"\nother: 1", 90000 },
		{ "duration: 1h", 3600000 }, { "duration: 1ns", 1 },
		{ "duration: 0s", 0 }, { "", 0 }, { "other: x", 0 },
		{ "duration: 1h1s", -1 }, { "duration: -1s", -1 },
		{ "duration: 60", -1 }, { "duration: [1s]", -1 },
		{ "- duration: 1s", -1 }, { "duration: 1s\n  bad: [", -1 },
		{ "60s", -1 },
	};
	long long	ms;
	char		*why;
	size_t		i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		why = NULL;
		if (cases[i].ms < 0) {
			cr_assert_neq(coldstart_parse(cases[i].in, &ms, &why), 0,
			    "%s read as %lld", cases[i].in, ms);
			cr_assert_not_null(why);
			free(why);
			continue;
		}
		cr_assert_eq(coldstart_parse(cases[i].in, &ms, &why), 0,
		    "%s: %s", cases[i].in, why ? why : "");
		cr_assert_eq(ms, cases[i].ms, "%s: %lld", cases[i].in, ms);
	}
}

static struct env	e;

static void
setup(void)
{
	/* Go's coldstart_test: node 0 DRAM with the CPUs, node 1 PMEM. */
	env_open_spec(&e, "packages=1,cores=2,mem=2G,memnodes=1,"
	    "memnodesize=8G", "{}");
}

static void
teardown(void)
{
	env_close(&e);
}

TestSuite(coldstart, .init = setup, .fini = teardown);

#define ANN(id, v)	"memory-type.resource-policy.nri.io/container." id \
			"=pmem,dram;cold-start.resource-policy.nri.io/" \
			"container." id "=" v

static void
create(const char *id, const char *ann)
{
	cr_assert_eq(env_create_mem(&e, id, "G", 1000, 1000, 256LL << 20,
	    -997, NULL, ann, NULL), 0, "%s: %s", id, e.cause ? e.cause : "");
}

static void
assert_mems(const char *id, const char *want)
{
	struct cpuset	 w = CPUSET_INITIALIZER;
	char		*got = cpuset_format(&policy_pinning(e.P, id)->mems);

	cr_assert_eq(cpuset_parse(&w, want, NULL), 0);
	cr_assert(cpuset_equal(&policy_pinning(e.P, id)->mems, &w),
	    "%s has memory %s, not %s", id, got, want);
	free(got);
	cpuset_clear(&w);
}

Test(coldstart, go_coldstart_test)
{
	const struct pinning	*u;
	struct cpuset		 w = CPUSET_INITIALIZER;

	create("c", ANN("c", "duration: 1s"));
	assert_mems("c", "1");
	cr_assert(policy_start_begins(e.P, "c"));
	cr_assert_not(policy_start_begins(e.P, "nobody"));
	/* Not started, nothing runs out. */
	cr_assert_eq(policy_cold_next(e.P), 0);
	env_reset(&e);
	cr_assert_eq(policy_cold_due(e.P, 1LL << 50, &e.fx), 0);
	assert_mems("c", "1");

	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "c", 5000, &e.fx), 0);
	cr_assert(e.fx.save);
	cr_assert_eq(policy_cold_next(e.P), 6000);
	cr_assert_not(policy_start_begins(e.P, "c"), "begun already");
	/* A second start says nothing new. */
	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "c", 5500, &e.fx), 0);
	cr_assert_eq(e.fx.save, 0);
	cr_assert_eq(policy_cold_next(e.P), 6000);

	env_reset(&e);
	cr_assert_eq(policy_cold_due(e.P, 5999, &e.fx), 0);
	assert_mems("c", "1");
	env_reset(&e);
	cr_assert_eq(policy_cold_due(e.P, 6000, &e.fx), 1);
	cr_assert(e.fx.save);
	assert_mems("c", "0-1");
	u = env_update(&e, "c");
	cr_assert_not_null(u, "the runtime is not told");
	cr_assert_eq(cpuset_parse(&w, "0-1", NULL), 0);
	cr_assert(cpuset_equal(&u->mems, &w));
	cr_assert_eq(policy_cold_next(e.P), 0);
	/* Over: a start again does nothing. */
	cr_assert_not(policy_start_begins(e.P, "c"));
	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "c", 9000, &e.fx), 0);
	cr_assert_eq(policy_cold_next(e.P), 0);
	cpuset_clear(&w);
}

static struct policy *
restored(void)
{
	struct policy	*R = NULL;
	json_error_t	 err;
	char		*text = policy_save_text(e.P, NULL);
	json_t		*doc = json_loads(text, 0, &err);

	cr_assert_not_null(doc, "%s", err.text);
	cr_assert_eq(policy_restore(e.topo, e.cfg, doc, &R, &e.cause), 0,
	    "%s", e.cause);
	cr_assert_not_null(strstr(text, "\"coldStart\":{"), "%s", text);
	json_decref(doc);
	free(text);
	return (R);
}

Test(coldstart, a_restart_keeps_the_deadline_and_the_end)
{
	struct policy		*R;
	struct policy_effects	 fx;

	create("c", ANN("c", "duration: 90s"));
	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "c", 1000, &e.fx), 0);
	R = restored();
	cr_assert_eq(policy_cold_next(R), 91000, "%lld",
	    policy_cold_next(R));
	cr_assert_eq(cpuset_count(&policy_pinning(R, "c")->mems), 1);
	policy_free(R);

	env_reset(&e);
	cr_assert_eq(policy_cold_due(e.P, 91000, &e.fx), 1);
	R = restored();
	cr_assert_eq(policy_cold_next(R), 0);
	cr_assert_eq(cpuset_count(&policy_pinning(R, "c")->mems), 2,
	    "DRAM lost at the restart");
	/* And it is not started again. */
	policy_effects_init(&fx);
	cr_assert_eq(policy_start(R, "c", 200000, &fx), 0);
	cr_assert_eq(policy_cold_next(R), 0);
	policy_effects_clear(&fx);
	policy_free(R);
}

Test(coldstart, updates_and_reloads_keep_it)
{
	create("c", ANN("c", "duration: 10s"));
	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "c", 0, &e.fx), 0);
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "c", 1000, 1000, 512LL << 20, &e.fx,
	    &e.cause), 0, "%s", e.cause);
	cr_assert_eq(policy_cold_next(e.P), 10000);
	assert_mems("c", "1");
	env_reset(&e);
	cr_assert_eq(policy_reconfigure(e.P, e.cfg, &e.fx, &e.cause), 0);
	cr_assert_eq(policy_cold_next(e.P), 10000);
	env_reset(&e);
	cr_assert_eq(policy_cold_due(e.P, 10000, &e.fx), 1);
	assert_mems("c", "0-1");
	env_reset(&e);
	cr_assert_eq(policy_update(e.P, "c", 1000, 1000, 256LL << 20, &e.fx,
	    &e.cause), 0, "%s", e.cause);
	assert_mems("c", "0-1");
	env_reset(&e);
	cr_assert_eq(policy_reconfigure(e.P, e.cfg, &e.fx, &e.cause), 0);
	assert_mems("c", "0-1");
}

Test(coldstart, every_step_is_undone)
{
	create("c", ANN("c", "duration: 10s"));
	ENV_UNDONE(&e, "start", policy_start(e.P, "c", 0, &e.fx));
	cr_assert_eq(policy_start(e.P, "c", 0, &e.fx), 0);
	env_reset(&e);
	ENV_UNDONE(&e, "end", policy_cold_due(e.P, 10000, &e.fx) == 1 ? 0 : 1);
	cr_assert_eq(policy_cold_next(e.P), 10000);
}

Test(coldstart, dram_only_or_bad_values)
{
	/* Nothing but DRAM left without DRAM: no cold start, a warning. */
	cr_assert_eq(env_create_mem(&e, "d", "G", 1000, 1000, 0, -997, NULL,
	    "memory-type.resource-policy.nri.io/container.d=dram;"
	    "cold-start.resource-policy.nri.io/container.d=duration: 5s",
	    NULL), 0, "%s", e.cause);
	assert_mems("d", "0");
	cr_assert_not(policy_start_begins(e.P, "d"), "no cold start kept");
	cr_assert_geq(e.fx.nwarnings, 1);
	cr_assert_not_null(strstr(e.fx.warnings[0], "cold start"), "%s",
	    e.fx.warnings[0]);
	env_reset(&e);
	cr_assert_eq(policy_start(e.P, "d", 0, &e.fx), 0);
	cr_assert_eq(policy_cold_next(e.P), 0);
	/* A value Go cannot read refuses the container, as Go does. */
	cr_assert_neq(env_create_mem(&e, "x", "G", 1000, 1000, 0, -997, NULL,
	    ANN("x", "duration: 2h"), NULL), 0);
	cr_assert_not_null(strstr(e.cause, "cold-start"), "%s", e.cause);
	cr_assert_null(policy_pinning(e.P, "x"));
}
