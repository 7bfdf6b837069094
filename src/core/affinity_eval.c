/*
 * affinity_eval.c weighs a container's explicit affinities over the
 * containers held, per pool, for pool scoring (Go's
 * calculatePoolAffinities): each affinity adds its weight to the pool of
 * every other container that is in its scope and matches it.
 *
 * Candidates come from the index, not from walking every container: of
 * scope and match, whichever can be looked up (Equals, In, Exists and the
 * Matches operators on one key) and names fewer containers gives them,
 * and each is then checked against both. When one side is AlwaysTrue and
 * the other a negation (NotEqual, NotIn, NotExist, MatchesNot,
 * MatchesNone) of one key, the containers it holds for are counted as the
 * pool's containers less those its positive twin finds. Only when neither
 * side can be looked up (two negations, a joint key's negation) are all
 * containers walked, and then most of them match.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "policy_priv.h"
#include "xmalloc.h"

/* Where an expression's candidates are. */
struct cands {
	int			 all;	/* every container */
	size_t			 total;	/* how many, at most (with dups) */
	int			 n;
	struct grant *const	**lists;
	size_t			*lens;
	struct grant		**ids;	/* by id: owned, one per value */
	int			 nids;
};

static void
cands_add(struct cands *c, struct grant *const *v, size_t n)
{
	if (n == 0)
		return;
	c->lists = xreallocarray(c->lists, (size_t)c->n + 1,
	    sizeof *c->lists);
	c->lens = xreallocarray(c->lens, (size_t)c->n + 1, sizeof *c->lens);
	c->lists[c->n] = v;
	c->lens[c->n++] = n;
	c->total += n;
}

static void
cands_clear(struct cands *c)
{
	free(c->lists);
	free(c->lens);
	free(c->ids);
	memset(c, 0, sizeof *c);
}

static int
is_label(int attr)
{
	return (attr == ATTR_LABEL || attr == ATTR_POD_LABEL);
}

/* The containers that have key k at all. */
static void
plan_has(const struct policy *P, const struct expr_key *k, struct cands *c)
{
	struct grant *const	*v;
	size_t			 n;

	if (k->attr == ATTR_NEVER)
		return;
	if (!is_label(k->attr) || (k->attr == ATTR_LABEL &&
	    expr_kube_label(k->label) >= 0)) {
		c->all = 1;	/* every container (with a pod) has it */
		return;
	}
	v = index_attr(P, k->attr, k->label, NULL, &n);
	cands_add(c, v, n);
}

static void
plan_value(const struct policy *P, const struct expr_key *k, const char *val,
    struct cands *c)
{
	struct grant *const	*v;
	struct grant		*g;
	size_t			 n;
	int			 kube;

	if (strcmp(val, "*") == 0) {
		plan_has(P, k, c);
		return;
	}
	switch (k->attr) {
	case ATTR_NEVER:
		return;
	case ATTR_ID:
		if ((g = strmap_get(P->ctrs, val)) == NULL)
			return;
		c->ids[c->nids] = g;
		cands_add(c, (struct grant *const *)&c->ids[c->nids], 1);
		c->nids++;
		return;
	default:
		v = index_attr(P, k->attr, k->label, val, &n);
		cands_add(c, v, n);
		/* A kubelet label may be kept as its field (expr.h). */
		if (k->attr == ATTR_LABEL &&
		    (kube = expr_kube_label(k->label)) >= 0) {
			v = index_attr(P, expr_kube_attr(kube), NULL, val, &n);
			cands_add(c, v, n);
		}
		return;
	}
}

/* The candidates of e: a superset of the containers it holds for. */
static void
plan(const struct policy *P, const struct expr *e, struct cands *c)
{
	int	i;

	memset(c, 0, sizeof *c);
	switch (e->op) {
	case EXPR_EQUALS:
	case EXPR_IN:
		if (e->joint)
			break;
		/* ids point into this array, which must not move. */
		c->ids = xcalloc((size_t)e->nvalues + 1, sizeof *c->ids);
		for (i = 0; i < e->nvalues && !c->all; i++)
			plan_value(P, &e->keys[0], e->values[i], c);
		return;
	case EXPR_EXISTS:
	case EXPR_MATCHES:
	case EXPR_MATCHESANY:
		break;
	default:
		/* AlwaysTrue and the negations hold for most. */
		c->all = 1;
		return;
	}
	/* There when any of its keys is. */
	for (i = 0; i < e->nkeys && !c->all; i++)
		plan_has(P, &e->keys[i], c);
}

/* What expressions see of a container. */
void
cspec_subject(const struct cspec *c, struct expr_subject *s)
{
	memset(s, 0, sizeof *s);
	s->id = c->id;
	s->name = c->name;
	s->ns = c->ns;
	s->qos = c->qos;
	s->labels = c->labels;
	s->nlabels = c->nlabels;
	s->kube_labels = c->kube_labels;
	s->has_pod = c->pod != NULL;
	s->pod_id = c->pod;
	s->pod_uid = c->pod_uid;
	s->pod_name = c->pod_name;
	s->pod_labels = c->pod_labels;
	s->npod_labels = c->npod_labels;
}

static void
weigh_one(const struct policy *P, const struct cspec *self,
    const struct affinity *a, struct grant *g, unsigned long mark, double *aff)
{
	struct expr_subject	s;

	if (g->mark == mark)
		return;
	g->mark = mark;
	(void)index_visit(P, 1);
	if (g->kind != GRANT_CONTAINER || g->pool == NULL ||
	    strcmp(g->key, self->id) == 0)
		return;
	if (a->pod_scope && (g->spec.pod == NULL ||
	    strcmp(g->spec.pod, self->pod) != 0))
		return;
	cspec_subject(&g->spec, &s);
	if ((!a->pod_scope && !expr_eval(&a->scope, &s)) ||
	    !expr_eval(&a->match, &s))
		return;
	aff[g->pool->id] += a->weight;
}

/* The operator that holds exactly where op does not, when op negates. */
static int
positive_of(enum expr_op op)
{
	switch (op) {
	case EXPR_NOTEQUAL:
		return (EXPR_EQUALS);
	case EXPR_NOTIN:
		return (EXPR_IN);
	case EXPR_NOTEXIST:
		return (EXPR_EXISTS);
	case EXPR_MATCHESNOT:
		return (EXPR_MATCHES);
	case EXPR_MATCHESNONE:
		return (EXPR_MATCHESANY);
	default:
		return (-1);
	}
}

/*
 * An affinity of AlwaysTrue and a negation of one key (or two
 * AlwaysTrue), weighed by count: per pool, its containers less those the
 * negation does not hold for, found by its positive twin. 0 when the
 * affinity is not of that shape.
 */
static int
weigh_by_count(const struct policy *P, const struct cspec *self,
    const struct affinity *a, double *aff)
{
	const struct expr	*neg;
	struct expr		 twin;
	struct expr_subject	 s;
	struct cands		 c;
	struct grant		*g;
	unsigned long		 mark;
	size_t			 i;
	int			*off, id, np, l;

	if (a->pod_scope)
		return (0);
	if (a->scope.op == EXPR_ALWAYSTRUE)
		neg = a->match.op == EXPR_ALWAYSTRUE ? NULL : &a->match;
	else if (a->match.op == EXPR_ALWAYSTRUE)
		neg = &a->scope;
	else
		return (0);
	memset(&c, 0, sizeof c);
	if (neg != NULL) {
		if (neg->joint || positive_of(neg->op) < 0)
			return (0);
		twin = *neg;		/* shares keys and values */
		twin.op = (enum expr_op)positive_of(neg->op);
		plan(P, &twin, &c);
		if (c.all) {
			cands_clear(&c);
			return (0);
		}
	}
	np = pool_tree_count(P->tree);
	off = xcalloc((size_t)np, sizeof *off);
	mark = index_mark(P);
	for (l = 0; l < c.n; l++)
		for (i = 0; i < c.lens[l]; i++) {
			g = c.lists[l][i];
			if (g->mark == mark)
				continue;
			g->mark = mark;
			(void)index_visit(P, 1);
			if (g->kind != GRANT_CONTAINER || g->pool == NULL)
				continue;
			cspec_subject(&g->spec, &s);
			if (!expr_eval(neg, &s))
				off[g->pool->id]++;
		}
	for (id = 0; id < np; id++)
		aff[id] += (double)a->weight *
		    (index_ncontainers(P, id) - off[id]);
	/* Its own grant (an update, a create again) is not another. */
	if ((g = strmap_get(P->ctrs, self->id)) != NULL &&
	    g->kind == GRANT_CONTAINER && g->pool != NULL) {
		cspec_subject(&g->spec, &s);
		if (neg == NULL || expr_eval(neg, &s))
			aff[g->pool->id] -= a->weight;
	}
	free(off);
	cands_clear(&c);
	return (1);
}

static void
weigh(const struct policy *P, const struct cspec *self,
    const struct affinity *a, double *aff)
{
	struct cands		 sc, mc, *c;
	struct grant *const	*v;
	struct grant		**all;
	unsigned long		 mark;
	size_t			 i, n;
	int			 l;

	if (a->pod_scope) {
		if (self->pod == NULL)
			return;		/* no pod: nothing in its scope */
		memset(&sc, 0, sizeof sc);
		v = index_attr(P, ATTR_POD_ID, NULL, self->pod, &n);
		cands_add(&sc, v, n);
	} else
		plan(P, &a->scope, &sc);
	plan(P, &a->match, &mc);
	if (sc.all && mc.all && weigh_by_count(P, self, a, aff)) {
		cands_clear(&sc);
		cands_clear(&mc);
		return;
	}
	if (sc.all && mc.all)
		c = NULL;
	else if (sc.all)
		c = &mc;
	else if (mc.all)
		c = &sc;
	else
		c = sc.total <= mc.total ? &sc : &mc;
	mark = index_mark(P);
	if (c == NULL) {
		/* Neither side can be looked up (two negations, a joint
		 * key's): most containers match, so all are looked at. */
		all = (struct grant **)strmap_values(P->ctrs, &n);
		for (i = 0; i < n; i++)
			weigh_one(P, self, a, all[i], mark, aff);
		free(all);
	} else
		for (l = 0; l < c->n; l++)
			for (i = 0; i < c->lens[l]; i++)
				weigh_one(P, self, a, c->lists[l][i], mark,
				    aff);
	cands_clear(&sc);
	cands_clear(&mc);
}

void
affinity_weigh(const struct policy *P, const struct cspec *self,
    const struct affinity_set *set, double *aff)
{
	int	i;

	for (i = 0; i < set->n; i++)
		weigh(P, self, &set->v[i], aff);
}

/* The container's explicit affinities, from its pod's annotations. */
int
affinity_of(const struct cspec *c, struct affinity_set *set, char **cause)
{
	static const char *const keys[2] = { AFFINITY_KEY, ANTI_AFFINITY_KEY };
	const char	*v;
	char		*why = NULL;
	int		 i, rc;

	memset(set, 0, sizeof *set);
	for (i = 0; i < 2; i++) {
		if ((v = policy_kv_get(c->ann, c->nann, keys[i])) == NULL)
			continue;
		if ((rc = affinity_parse(v, i == 1, c->name, set, &why)) != 0) {
			xasprintf(cause, "container %s: annotation %s: %s",
			    c->id, keys[i], why);
			free(why);
			affinity_set_clear(set);
			return (rc);
		}
	}
	return (0);
}
