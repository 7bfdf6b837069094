/*
 * invariants.c owns the live invariants of a policy (invariants.h) and the
 * list of violations that topoawarectl check answers with. Each check
 * recomputes from the grants what the policy keeps incrementally (the free
 * sets and the portions of supply.c), so an accounting slip shows as a
 * difference between the two.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants.h"
#include "policy_priv.h"
#include "xmalloc.h"

void
violations_init(struct violations *vs)
{
	memset(vs, 0, sizeof *vs);
}

void
violations_clear(struct violations *vs)
{
	int	i;

	for (i = 0; i < vs->n; i++) {
		free(vs->v[i].kind);
		free(vs->v[i].what);
		free(vs->v[i].detail);
	}
	free(vs->v);
	violations_init(vs);
}

void
violations_add(struct violations *vs, const char *kind, const char *what,
    const char *fmt, ...)
{
	struct violation	*v;
	va_list			 ap;

	if (vs->n >= VIOLATIONS_MAX) {
		vs->dropped++;
		return;
	}
	vs->v = xreallocarray(vs->v, (size_t)vs->n + 1, sizeof *vs->v);
	v = &vs->v[vs->n++];
	v->kind = xstrdup(kind);
	v->what = xstrdup(what);
	va_start(ap, fmt);
	if (vasprintf(&v->detail, fmt, ap) < 0)
		v->detail = xstrdup("?");
	va_end(ap);
}

json_t *
violations_json(const struct violations *vs)
{
	json_t	*a = json_array(), *o;
	char	*more;
	int	 i;

	for (i = 0; i < vs->n; i++) {
		/* Names from outside may not be UTF-8: never lose the entry. */
		o = json_pack("{s:s, s:s, s:s}", "kind", vs->v[i].kind,
		    "what", vs->v[i].what, "detail", vs->v[i].detail);
		if (o == NULL)
			o = json_pack("{s:s, s:s, s:s}", "kind", vs->v[i].kind,
			    "what", "(not UTF-8)", "detail", "(not UTF-8)");
		json_array_append_new(a, o);
	}
	if (vs->dropped > 0) {
		xasprintf(&more, "%d more not named", vs->dropped);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "kind",
		    "more", "what", "violations", "detail", more));
		free(more);
	}
	return (a);
}

static char *
grant_name(const struct grant *g)
{
	char	*s;

	xasprintf(&s, "%s %s", g->kind == GRANT_CLAIM ? "claim" :
	    "container", g->key);
	return (s);
}

/* A grant that takes CPUs from a pool for itself alone. */
static int
holder(const struct grant *g)
{
	return (g->kind == GRANT_CLAIM || holds_cpus(g));
}

/* A set as list form, "none" when empty; caller frees. */
static char *
set_text(const struct cpuset *s)
{
	if (cpuset_empty(s))
		return (xstrdup("none"));
	return (cpuset_format(s));
}

/* "<la> <a>, <lb> <b>" */
static void
sets_differ(struct violations *vs, const char *kind, const char *what,
    const char *la, const struct cpuset *a, const char *lb,
    const struct cpuset *b)
{
	char	*ta = set_text(a), *tb = set_text(b);

	violations_add(vs, kind, what, "%s %s, %s %s", la, ta, lb, tb);
	free(ta);
	free(tb);
}

/* No CPU held by two grants; the union of what they hold into held. */
static void
check_twice(struct grant **v, size_t n, struct violations *vs,
    struct cpuset *held)
{
	struct cpuset	 both = CPUSET_INITIALIZER;
	char		*a, *b, *cpus;
	size_t		 i, j;

	for (i = 0; i < n; i++) {
		if (!holder(v[i]))
			continue;
		if (cpuset_intersects(held, &v[i]->exclusive)) {
			for (j = 0; j < i; j++) {
				if (!holder(v[j]) || !cpuset_intersects(
				    &v[j]->exclusive, &v[i]->exclusive))
					continue;
				cpuset_copy(&both, &v[j]->exclusive);
				cpuset_and(&both, &v[i]->exclusive);
				a = grant_name(v[j]);
				b = grant_name(v[i]);
				cpus = cpuset_format(&both);
				violations_add(vs, "cpu-twice", a, "CPUs %s are "
				    "held by %s and by %s", cpus, a, b);
				free(cpus);
				free(a);
				free(b);
			}
		}
		cpuset_or(held, &v[i]->exclusive);
	}
	cpuset_clear(&both);
}

/* A grant's CPUs lie in its pool's static supply. */
static void
check_inside(const struct grant *g, struct violations *vs,
    struct cpuset *tmp)
{
	char	*name, *cpus;

	if (!holder(g))
		return;
	name = grant_name(g);
	if (g->pool == NULL) {
		violations_add(vs, "outside-pool", name, "holds CPUs but has "
		    "no pool");
		free(name);
		return;
	}
	cpuset_copy(tmp, &g->exclusive);
	cpuset_andnot(tmp, &g->pool->isolated);
	cpuset_andnot(tmp, &g->pool->sharable);
	if (!cpuset_empty(tmp)) {
		cpus = set_text(tmp);
		violations_add(vs, "outside-pool", name, "CPUs %s are not in "
		    "the supply of pool %s", cpus, g->pool->name);
		free(cpus);
	}
	free(name);
}

/* A claim's CPUs lie in the nodes of the devices we offer. */
static void
check_claim_nodes(const struct policy *P, const struct grant *g,
    struct violations *vs, struct cpuset *tmp)
{
	char	*name, *cpus;
	int	 i;

	cpuset_copy(tmp, &g->exclusive);
	for (i = 0; i < P->ndevs; i++)
		cpuset_andnot(tmp, &P->devs[i].grantable);
	if (cpuset_empty(tmp))
		return;
	name = grant_name(g);
	cpus = set_text(tmp);
	violations_add(vs, "claim-node", name, "CPUs %s are in no NUMA "
	    "node's grantable CPUs", cpus);
	free(cpus);
	free(name);
}

/* A container pinned to claims runs on exactly the CPUs they hold. */
static void
check_pinned(const struct policy *P, const struct grant *g,
    struct violations *vs, struct cpuset *tmp)
{
	const struct grant	*c;
	char			*name;
	int			 i;

	if (g->kind != GRANT_CLAIM_PINNED)
		return;
	name = grant_name(g);
	cpuset_zero(tmp);
	for (i = 0; i < g->nclaims; i++) {
		if ((c = strmap_get(P->claims, g->claims[i])) == NULL)
			violations_add(vs, "pinned", name, "pinned to claim "
			    "%s, which is not held", g->claims[i]);
		else
			cpuset_or(tmp, &c->exclusive);
	}
	if (!cpuset_equal(tmp, &g->exclusive))
		sets_differ(vs, "pinned", name, "runs on CPUs", &g->exclusive,
		    "its claims hold", tmp);
	free(name);
}

struct granted {
	int	shared;
	int	reserved;
	int	zero;
};

/* Each pool's free sets and portions are what its grants leave. */
static void
check_supply(const struct policy *P, struct grant **v, size_t n,
    const struct cpuset *held, struct violations *vs)
{
	const struct supply	*s;
	const struct pool	*p;
	struct granted		*sum;
	struct cpuset		 want = CPUSET_INITIALIZER;
	char			*what;
	size_t			 i;
	int			 np = pool_tree_count(P->tree), id;

	sum = xcalloc((size_t)np, sizeof *sum);
	for (i = 0; i < n; i++) {
		if (v[i]->kind == GRANT_CLAIM_PINNED || v[i]->pool == NULL)
			continue;
		id = v[i]->pool->id;
		if (v[i]->type == CPU_NORMAL) {
			sum[id].shared += v[i]->portion;
			sum[id].zero += v[i]->zero_req ? 1 : 0;
		} else if (v[i]->type == CPU_RESERVED)
			sum[id].reserved += v[i]->portion;
	}
	for (id = 0; id < np; id++) {
		p = pool_tree_get(P->tree, id);
		s = &P->sup[id];
		xasprintf(&what, "pool %s", p->name);
		cpuset_copy(&want, &p->isolated);
		cpuset_andnot(&want, held);
		if (!cpuset_equal(&want, &s->isolated))
			sets_differ(vs, "supply", what, "free isolated CPUs "
			    "are", &s->isolated, "the grants leave", &want);
		cpuset_copy(&want, &p->sharable);
		cpuset_andnot(&want, held);
		if (!cpuset_equal(&want, &s->sharable))
			sets_differ(vs, "supply", what, "free sharable CPUs "
			    "are", &s->sharable, "the grants leave", &want);
		if (sum[id].shared != s->granted_shared ||
		    sum[id].reserved != s->granted_reserved ||
		    sum[id].zero != s->zero_req)
			violations_add(vs, "supply", what, "accounts %dm "
			    "shared, %dm reserved and %d grants without a "
			    "request; its grants hold %dm, %dm and %d",
			    s->granted_shared, s->granted_reserved,
			    s->zero_req, sum[id].shared, sum[id].reserved,
			    sum[id].zero);
		free(what);
	}
	cpuset_clear(&want);
	free(sum);
}

int
invariants_check(const struct policy *P, struct violations *vs)
{
	struct grant	**ctrs, **claims, **all;
	struct cpuset	  held = CPUSET_INITIALIZER, tmp = CPUSET_INITIALIZER;
	size_t		  nc, nk, i;
	int		  before = vs->n + vs->dropped;

	ctrs = policy_sorted(P->ctrs, &nc);
	claims = policy_sorted(P->claims, &nk);
	/* Claims first: a container on a claim's CPUs is the one named. */
	all = xcalloc(nc + nk + 1, sizeof *all);
	memcpy(all, claims, nk * sizeof *all);
	memcpy(all + nk, ctrs, nc * sizeof *all);
	check_twice(all, nc + nk, vs, &held);
	for (i = 0; i < nc + nk; i++) {
		check_inside(all[i], vs, &tmp);
		if (all[i]->kind == GRANT_CLAIM)
			check_claim_nodes(P, all[i], vs, &tmp);
		check_pinned(P, all[i], vs, &tmp);
	}
	check_supply(P, all, nc + nk, &held, vs);
	cpuset_clear(&held);
	cpuset_clear(&tmp);
	free(all);
	free(ctrs);
	free(claims);
	return (vs->n + vs->dropped - before);
}
