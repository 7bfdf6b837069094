/*
 * Helpers for the policy tests: a policy on a recorded or synthetic
 * machine with a config given as JSON text, claims and containers written
 * compactly, and checks of pinnings and updates.
 */
#ifndef TOPOAWARE_POLICYLIB_H
#define TOPOAWARE_POLICYLIB_H

#include "policy.h"

struct env {
	struct topology	*topo;
	struct config	*cfg;
	struct policy	*P;
	struct policy_effects fx;
	char		*cause;
};

/* The config most policy suites share: CPUs 3 and 11 reserved. */
#define ENV_RESERVED_3_11 "{\"reservedResources\":{\"cpu\":\"cpuset:3,11\"}}"

/* A suite's policy on the recorded server with ENV_RESERVED_3_11:
 * static struct env e, and its .init and .fini, env_setup and
 * env_teardown. */
#define ENV_SERVER_SUITE()						\
	static struct env e;						\
	static void env_setup(void)					\
	{								\
		env_open(&e, testlib_machine("server"),			\
		    ENV_RESERVED_3_11);					\
	}								\
	static void env_teardown(void)					\
	{								\
		env_close(&e);						\
	}

/* A policy on a machine ("server") or a root folder, config JSON text. */
void	env_open(struct env *, struct topology *, const char *config);
void	env_close(struct env *);
/* A policy on a machine topoaware-mksysfs makes from spec. */
void	env_open_spec(struct env *, const char *spec, const char *config);
/* Resets the effects and the cause before the next operation. */
void	env_reset(struct env *);

/* "cpudevnuma001=2,cpudevnuma000=3"; "=-" for a result without amount. */
int	env_claim(struct env *, const char *uid, const char *results);
int	env_release(struct env *, const char *uid);
/* qos "BE", "BU" or "G"; request and limit in milli, -1 unset. */
int	env_claim_for(struct env *, const char *uid, const char *results,
	    const char *pods);
int	env_create(struct env *, const char *id, const char *qos,
	    long long req, long long lim, const char *ns,
	    const char *annotations, const char *env);
/* The same with a memory limit in bytes (0 none) and an OOM score
 * adjustment (ENV_NO_OOM: none). */
#define ENV_NO_OOM	(-100000)
int	env_create_mem(struct env *, const char *id, const char *qos,
	    long long req, long long lim, long long mem_limit, int oom_adj,
	    const char *ns, const char *annotations, const char *env);
int	env_remove(struct env *, const char *id);

/* The effects' claim CPUs, own pinning, an update's CPUs (NULL if none). */
char	*env_claim_cpus(struct env *);
char	*env_self_cpus(struct env *);
const struct pinning *env_update(struct env *, const char *id);
/* The pinning the policy holds for a container, as list form. */
char	*env_cpus_of(struct env *, const char *id);
/* An export as "KEY=value\n" lines; kv is freed (policy_export_free). */
char	*env_export_text(struct policy_kv *kv, int n);
/* A container's export (policy_export) as such lines. */
char	*env_export(struct env *, const char *id);
/* Everything an undo must restore, as one string: the state text, the
 * pools with their free supply and memory, and every applied pinning. */
char	*env_snapshot(struct env *);
/* The package of the first CPU a container is pinned to. */
int	env_package_of(struct env *, const char *id);
/* Runs call (0 is success), checks it changed the snapshot, undoes it
 * (policy_undo) and checks the snapshot is back, byte for byte. */
#define ENV_UNDONE(e, what, call) do {					\
	char	*before_, *during_, *after_;				\
									\
	before_ = env_snapshot(e);					\
	env_reset(e);							\
	cr_assert_eq((call), 0, "%s: %s", what,				\
	    (e)->cause ? (e)->cause : "");				\
	during_ = env_snapshot(e);					\
	cr_assert_str_neq(during_, before_, "%s changed nothing", what);	\
	policy_undo((e)->P, &(e)->fx);					\
	after_ = env_snapshot(e);					\
	cr_assert_str_eq(after_, before_, "%s not undone", what);	\
	free(before_);							\
	free(during_);							\
	free(after_);							\
	env_reset(e);							\
} while (0)
/* Total free isolated + sharable CPUs over the leaves, to see takes. */
int	env_free_cpus(struct env *);

#endif
