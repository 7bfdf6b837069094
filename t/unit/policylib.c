/*
 * policylib.c: the helpers of policylib.h.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policylib.h"
#include "testlib.h"
#include "policy_priv.h"
#include "xmalloc.h"

void
env_open(struct env *e, struct topology *t, const char *config)
{
	memset(e, 0, sizeof *e);
	e->topo = t;
	cr_assert_eq(config_parse(config, strlen(config), &e->cfg, &e->cause),
	    0, "config: %s", e->cause ? e->cause : "");
	cr_assert_eq(policy_new(t, e->cfg, &e->P, &e->cause), 0, "policy: %s",
	    e->cause ? e->cause : "");
	policy_effects_init(&e->fx);
}

void
env_open_spec(struct env *e, const char *spec, const char *config)
{
	char	*dir = testlib_mksysfs(spec);

	env_open(e, testlib_topology(dir), config);
	free(dir);
}

void
env_close(struct env *e)
{
	policy_effects_clear(&e->fx);
	free(e->cause);
	policy_free(e->P);
	config_free(e->cfg);
	topology_free(e->topo);
}

void
env_reset(struct env *e)
{
	policy_effects_clear(&e->fx);
	free(e->cause);
	e->cause = NULL;
}

/*
 * After every operation: an update marked as its pool's file is one of a
 * container whose resources.sh is that pool's, and the pool is named.
 */
static int
checked(struct env *e, int rc)
{
	const struct pool	*p;
	int			 i, j, named;

	for (i = 0; rc == 0 && i < e->fx.nupdates; i++) {
		if (!e->fx.updates[i].pool_file)
			continue;
		p = policy_export_shared_pool(e->P, e->fx.updates[i].id);
		cr_assert_not_null(p, "%s marked as its pool's file",
		    e->fx.updates[i].id);
		for (named = 0, j = 0; j < e->fx.npools; j++)
			named += strcmp(e->fx.pools[j], p->name) == 0;
		cr_assert_eq(named, 1, "%s: pool %s named %d times",
		    e->fx.updates[i].id, p->name, named);
	}
	return (rc);
}

int
env_claim(struct env *e, const char *uid, const char *results)
{
	return (env_claim_for(e, uid, results, NULL));
}

/* pods: the consumers' pod UIDs, comma-separated; NULL: not known. */
int
env_claim_for(struct env *e, const char *uid, const char *results,
    const char *pods)
{
	struct claim_meta	 meta;
	const char		*pv[16];
	char			*pcopy = NULL, *ptok, *psave = NULL;
	struct claim_result	 res[16];
	char			*copy, *tok, *save = NULL, *eq;
	int			 n = 0, rc;

	env_reset(e);
	copy = xstrdup(results);
	for (tok = strtok_r(copy, ",", &save); tok != NULL && n < 16;
	    tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		cr_assert_not_null(eq, "bad result literal %s", tok);
		*eq = '\0';
		res[n].device = tok;
		res[n].cpu = strcmp(eq + 1, "-") == 0 ? NULL : eq + 1;
		n++;
	}
	memset(&meta, 0, sizeof meta);
	if (pods != NULL) {
		meta.known = 1;
		meta.pods = pv;
		pcopy = xstrdup(pods);
		for (ptok = strtok_r(pcopy, ",", &psave); ptok != NULL &&
		    meta.npods < 16; ptok = strtok_r(NULL, ",", &psave))
			pv[meta.npods++] = ptok;
	}
	rc = policy_claim(e->P, uid, res, n, pods != NULL ? &meta : NULL,
	    &e->fx, &e->cause);
	free(pcopy);
	free(copy);
	return (checked(e, rc));
}

int
env_release(struct env *e, const char *uid)
{
	env_reset(e);
	return (checked(e, policy_release(e->P, uid, &e->fx)));
}

/* "k=v;k=v" into key-value pairs (at most 8). */
static int
kvs(const char *text, struct policy_kv *kv, char **copy)
{
	char	*tok, *save = NULL, *eq;
	int	 n = 0;

	*copy = NULL;
	if (text == NULL)
		return (0);
	*copy = xstrdup(text);
	for (tok = strtok_r(*copy, ";", &save); tok != NULL && n < 8;
	    tok = strtok_r(NULL, ";", &save)) {
		eq = strchr(tok, '=');
		cr_assert_not_null(eq);
		*eq = '\0';
		kv[n].key = tok;
		kv[n].value = eq + 1;
		n++;
	}
	return (n);
}

int
env_create(struct env *e, const char *id, const char *qos, long long req,
    long long lim, const char *ns, const char *annotations, const char *envs)
{
	return (env_create_mem(e, id, qos, req, lim, 0, ENV_NO_OOM, ns,
	    annotations, envs));
}

int
env_create_mem(struct env *e, const char *id, const char *qos, long long req,
    long long lim, long long mem_limit, int oom_adj, const char *ns,
    const char *annotations, const char *envs)
{
	struct container_spec	 s;
	struct policy_kv	 ann[8], env[8];
	char			*c1, *c2;
	int			 rc;

	env_reset(e);
	memset(&s, 0, sizeof s);
	s.id = id;
	s.name = id;
	s.pod = id;
	s.pod_uid = id;		/* each container its own pod */
	s.namespace = ns ? ns : "default";
	s.qos = strcmp(qos, "G") == 0 ? QOS_GUARANTEED :
	    strcmp(qos, "BU") == 0 ? QOS_BURSTABLE : QOS_BESTEFFORT;
	s.cpu_request = req;
	s.cpu_limit = lim;
	s.mem_limit = mem_limit;
	s.has_oom = oom_adj != ENV_NO_OOM;
	s.oom_adj = s.has_oom ? oom_adj : 0;
	s.nannotations = kvs(annotations, ann, &c1);
	s.annotations = ann;
	s.nenv = kvs(envs, env, &c2);
	s.env = env;
	rc = policy_create(e->P, &s, &e->fx, &e->cause);
	free(c1);
	free(c2);
	return (checked(e, rc));
}

int
env_remove(struct env *e, const char *id)
{
	env_reset(e);
	return (checked(e, policy_remove(e->P, id, &e->fx)));
}

char *
env_claim_cpus(struct env *e)
{
	return (cpuset_format(&e->fx.claim_cpus));
}

char *
env_self_cpus(struct env *e)
{
	return (cpuset_format(&e->fx.self.cpus));
}

const struct pinning *
env_update(struct env *e, const char *id)
{
	int	i;

	for (i = 0; i < e->fx.nupdates; i++)
		if (strcmp(e->fx.updates[i].id, id) == 0)
			return (policy_pinning(e->P, id));
	return (NULL);
}

char *
env_cpus_of(struct env *e, const char *id)
{
	const struct pinning	*p = policy_pinning(e->P, id);

	cr_assert_not_null(p, "no container %s", id);
	return (cpuset_format(&p->cpus));
}

char *
env_export_text(struct policy_kv *kv, int n)
{
	char	*out = xstrdup(""), *tmp;
	int	 i;

	for (i = 0; i < n; i++) {
		xasprintf(&tmp, "%s%s=%s\n", out, kv[i].key, kv[i].value);
		free(out);
		out = tmp;
	}
	policy_export_free(kv, n);
	return (out);
}

char *
env_export(struct env *e, const char *id)
{
	struct policy_kv	*kv;
	int			 n;

	cr_assert_eq(policy_export(e->P, id, &kv, &n), 0, "no export of %s",
	    id);
	return (env_export_text(kv, n));
}

int
env_free_cpus(struct env *e)
{
	const struct pool	*p;
	int			 i, n = 0;

	for (i = 0; i < pool_tree_count(e->P->tree); i++) {
		p = pool_tree_get(e->P->tree, i);
		if (p->nchildren > 0)
			continue;
		n += cpuset_count(&e->P->sup[i].isolated) +
		    cpuset_count(&e->P->sup[i].sharable);
	}
	return (n);
}

char *
env_snapshot(struct env *e)
{
	struct grant	**v;
	json_t		 *pools;
	char		 *text, *ptext, *pins = xstrdup(""), *tmp, *c, *m;
	size_t		  i, n;

	text = policy_save_text(e->P, NULL);
	pools = policy_pools_json(e->P);
	ptext = json_dumps(pools, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(pools);
	v = policy_sorted(e->P->ctrs, &n);
	for (i = 0; i < n; i++) {
		c = cpuset_format(&v[i]->applied.cpus);
		m = cpuset_format(&v[i]->applied.mems);
		xasprintf(&tmp, "%s%s=%s/%s/%d;", pins, v[i]->key, c, m,
		    v[i]->applied.shares);
		free(pins);
		pins = tmp;
		free(c);
		free(m);
	}
	free(v);
	xasprintf(&tmp, "%s\n%s\n%s", text, ptext, pins);
	free(text);
	free(ptext);
	free(pins);
	return (tmp);
}

int
env_package_of(struct env *e, const char *id)
{
	const struct pinning	*p = policy_pinning(e->P, id);

	cr_assert_not_null(p, "%s is not placed", id);
	return (topology_cpu(e->topo, cpuset_first(&p->cpus))->package);
}
