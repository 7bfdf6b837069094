/*
 * explain.c keeps, per placement, how it was decided (explain.h) and
 * renders it with the grant's request and CPUs for topoawarectl explain.
 */
#include "autoconf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "pool.h"
#include "xmalloc.h"

/* score_cmp's rules (policy.c), in the order it tries them. */
static const char *const rules[] = {
	"capacity", "affinity", "memory offer", "memory types offered",
	"memory burstability", "CPU burstability", "burstable level",
	"burstable level, pool id", "tighter memory offer",
	"memory types held", "CPU priority", "depth",
	"reserved capacity per container", "isolated capacity",
	"isolated capacity, pool id", "normal-priority capacity",
	"sliceable capacity", "sliceable capacity, pool id",
	"colocated containers", "shared capacity", "pool id",
};
#define NRULES		((int)(sizeof rules / sizeof rules[0]))
#define RULE_WINNER	255
#define RULE_UNKNOWN	254

#define NAME_BYTES	32

/* One weighed pool, packed: a score per pool costs 48 bytes, and the
 * names are the tree's, shared by every record of it. */
struct cand {
	unsigned short	pool;		/* its id in names */
	unsigned char	rule;		/* in rules[], or RULE_* */
	unsigned char	mems;
	unsigned char	mem_match;
	unsigned char	mem_own;
	unsigned char	depth;
	unsigned char	level;
	int		isolated;
	int		shared;
	int		reserved;
	int		colocated;
	int		prio[CPU_PRIO_COUNT];
	int		burst;
	float		affinity;
	unsigned	mem_cap_mib;
};

struct explain {
	int		 refs;
	unsigned char	 how;
	unsigned char	 target;
	unsigned char	 omit_rule;	/* the latest rule the omitted lost on */
	short		 ncand;		/* winner first, then closest first */
	int		 nomit;		/* weighed, not kept */
	struct explain	*first;		/* KEPT: how it got there */
	struct pool_names *names;	/* SCORED: the candidates' */
	char		 pool[NAME_BYTES];	/* the others': where */
	struct cand	 cand[];
};

#define MAX_CANDS	((int)((EXPLAIN_MAX_BYTES - sizeof(struct explain)) / \
			    sizeof(struct cand)))

int
explain_rule_rank(const char *rule)
{
	int	i;

	/* score_cmp's texts are the literals above, most often merged
	 * into one by the linker: their pointers are tried first. */
	for (i = 0; rule != NULL && i < NRULES; i++)
		if (rules[i] == rule)
			return (i);
	for (i = 0; rule != NULL && i < NRULES; i++)
		if (strcmp(rules[i], rule) == 0)
			return (i);
	return (-1);
}

static unsigned char
clamp8(int v)
{
	return ((unsigned char)(v < 0 ? 0 : v > 250 ? 250 : v));
}

static void
name_copy(char *dst, const char *src)
{
	size_t	n = strlen(src);

	if (n >= NAME_BYTES)
		n = NAME_BYTES - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void
cand_fill(struct cand *c, const struct pool *p, const struct score *s,
    int rule)
{
	long long	mib = s->mem_cap / (1024 * 1024);
	int		i;

	c->pool = (unsigned short)(p->id <= USHRT_MAX ? p->id : USHRT_MAX);
	c->rule = (unsigned char)rule;
	c->mems = clamp8(s->mems);
	c->mem_match = s->mem_match != 0;
	c->mem_own = s->mem_own != 0;
	c->depth = clamp8(p->depth);
	c->isolated = s->isolated;
	c->shared = s->shared;
	c->reserved = s->reserved;
	c->colocated = s->colocated;
	for (i = 0; i < CPU_PRIO_COUNT; i++)
		c->prio[i] = s->prio[i];
	c->burst = s->burst;
	c->affinity = (float)s->affinity;
	c->mem_cap_mib = mib > 0xffffffffLL ? 0xffffffffu : (unsigned)mib;
}

/* Sort order of the losers: the latest rule first, then pool id. */
struct ranked {
	int	id;
	int	rank;
};

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked	*x = a, *y = b;

	if (x->rank != y->rank)
		return (x->rank > y->rank ? -1 : 1);
	return (x->id - y->id);
}

/*
 * v sorted as ranked_cmp orders it. v comes in pool id order, so an
 * insertion by rank alone keeps the ids in order: for the dozen pools of
 * a tree that costs a fifth of qsort, asked once for every container
 * placed by score.
 */
static void
ranked_sort(struct ranked *v, int n)
{
	struct ranked	t;
	int		i, j;

	if (n > POOLS_ON_STACK) {
		qsort(v, (size_t)n, sizeof *v, ranked_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		t = v[i];
		for (j = i; j > 0 && v[j - 1].rank < t.rank; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

struct explain *
explain_scored(const struct pool_tree *tree, int winner, int target,
    const struct score *scores, const char *const *why)
{
	struct explain	*e;
	struct ranked	*v, buf[POOLS_ON_STACK];
	const char	*last = NULL;
	int		 np = pool_tree_count(tree), i, n = 0, keep, r = -1;

	v = xscratch(buf, sizeof buf, (size_t)np, sizeof *v);
	for (i = 0; i < np; i++) {
		if (i == winner)
			continue;
		/* The rules are a few static texts: most pools lost on the
		 * one the last did. */
		if (why[i] != last || last == NULL) {
			last = why[i];
			r = explain_rule_rank(why[i]);
		}
		v[n].id = i;
		v[n].rank = r < 0 ? RULE_UNKNOWN : r;
		n++;
	}
	ranked_sort(v, n);
	keep = n + 1 <= MAX_CANDS ? n : MAX_CANDS - 1;
	e = xcalloc(1, sizeof *e + (size_t)(keep + 1) * sizeof e->cand[0]);
	e->refs = 1;
	e->how = EXPLAIN_SCORED;
	e->target = clamp8(target);
	e->names = pool_tree_names(tree);
	cand_fill(&e->cand[0], pool_tree_get(tree, winner), &scores[winner],
	    RULE_WINNER);
	for (i = 0; i < keep; i++)
		cand_fill(&e->cand[i + 1], pool_tree_get(tree, v[i].id),
		    &scores[v[i].id], v[i].rank);
	e->ncand = (short)(keep + 1);
	e->nomit = n - keep;
	e->omit_rule = e->nomit > 0 ? (unsigned char)v[keep].rank : 0;
	xscratch_free(v, buf);
	return (e);
}

struct explain *
explain_other(enum explain_how how, const char *pool, struct explain *first)
{
	struct explain	*e = xcalloc(1, sizeof *e);

	e->refs = 1;
	e->how = (unsigned char)how;
	if (pool != NULL)
		name_copy(e->pool, pool);
	/* What placed it first, never a chain of keeps. */
	if (first != NULL && first->how == EXPLAIN_KEPT)
		first = first->first;
	e->first = first != NULL ? explain_ref(first) : NULL;
	return (e);
}

struct explain *
explain_ref(struct explain *e)
{
	if (e != NULL)
		e->refs++;
	return (e);
}

void
explain_unref(struct explain *e)
{
	if (e == NULL || --e->refs > 0)
		return;
	explain_unref(e->first);
	pool_names_unref(e->names);
	free(e);
}

enum explain_how
explain_how_of(const struct explain *e)
{
	return ((enum explain_how)e->how);
}

size_t
explain_size(const struct explain *e)
{
	return (sizeof *e + (size_t)e->ncand * sizeof e->cand[0]);
}

static const char *
rule_name(int rank)
{
	return (rank >= 0 && rank < NRULES ? rules[rank] : "an unknown rule");
}

static const char *const how_names[] = { "scored", "kept", "root",
    "claims", "fallback" };

/* One candidate: its components in the order the scorer compares them. */
static json_t *
cand_json(const struct explain *e, const struct cand *c)
{
	json_t	*o;
	char	*outcome;

	if (c->rule == RULE_WINNER)
		outcome = xstrdup("chosen");
	else
		xasprintf(&outcome, "lost on %s", rule_name(c->rule));
	o = json_pack("{s:s, s:s, s:{s:i, s:i, s:i}, s:f, s:{s:i, s:b, s:I, "
	    "s:b}, s:i, s:{s:i, s:i, s:i}, s:i, s:i}",
	    "pool", pool_names_get(e->names, c->pool), "outcome", outcome,
	    "capacity", "isolated", c->isolated, "shared", c->shared,
	    "reserved", c->reserved,
	    "affinity", (double)c->affinity,
	    "memory", "nodes", (int)c->mems, "typesOffered", (int)c->mem_match,
	    "capacityMiB", (json_int_t)c->mem_cap_mib,
	    "typesHeld", (int)c->mem_own,
	    "burstMilli", c->burst,
	    "priority", "high", c->prio[CPU_PRIO_HIGH],
	    "normal", c->prio[CPU_PRIO_NORMAL], "low", c->prio[CPU_PRIO_LOW],
	    "depth", (int)c->depth, "colocated", c->colocated);
	free(outcome);
	return (o);
}

/* The rule by which the winner beat the closest loser. */
static const char *
deciding_rule(const struct explain *e)
{
	if (e->ncand < 2)
		return ("the only pool");
	return (rule_name(e->cand[1].rule));
}

/* The pool it was placed in: the winner's, for a placement by score. */
static const char *
decision_pool(const struct explain *e)
{
	if (e->how == EXPLAIN_SCORED)
		return (pool_names_get(e->names, e->cand[0].pool));
	return (e->pool[0] != '\0' ? e->pool : NULL);
}

json_t *
explain_json(const struct explain *e)
{
	json_t		*o, *a;
	const char	*pool;
	int		 i;

	o = json_pack("{s:s}", "how", how_names[e->how]);
	if ((pool = decision_pool(e)) != NULL)
		json_object_set_new(o, "pool", json_string(pool));
	if (e->how == EXPLAIN_SCORED) {
		json_object_set_new(o, "rule", json_string(deciding_rule(e)));
		a = json_array();
		for (i = 0; i < e->ncand; i++)
			json_array_append_new(a, cand_json(e, &e->cand[i]));
		json_object_set_new(o, "candidates", a);
		if (e->nomit > 0)
			json_object_set_new(o, "omitted", json_pack("{s:i, "
			    "s:s}", "pools", e->nomit, "lostOnOrBefore",
			    rule_name(e->omit_rule)));
	}
	if (e->how == EXPLAIN_KEPT)
		json_object_set_new(o, "first", e->first != NULL ?
		    explain_json(e->first) : json_null());
	return (o);
}
