/*
 * index.c keeps what an event needs to know about the grants held without
 * walking them all: per pool, the containers whose pinning follows its free
 * shared CPUs (policy_refresh looks only at the pools whose supply moved),
 * how many grants of each CPU type it holds and, when colocation is on,
 * how many of each pod and namespace (pool scoring); per claim, the
 * containers pinned to it (release); and the grants to look at again
 * (dirty); and, for affinity expressions, which containers have each value
 * of the attributes they can match (attr). Every grant enters and leaves
 * a policy's maps through index_link and index_unlink (policy_put and
 * undo), so the index is always the maps' and moves with them
 * (policy_swap).
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "policy_priv.h"
#include "postings.h"
#include "xmalloc.h"

/* Tags of the attribute postings: an attribute, or having a label. */
#define ATTR_HAS	0x100

struct index {
	int		  npools;
	struct strmap	**shared;	/* by pool: id -> grant */
	int		(*ntype)[3];	/* by pool: grants by cpu_type */
	unsigned long	 *seen;		/* by pool: path gen last refreshed */
	struct strmap	 *pods;		/* pod -> int[npools], colocation */
	struct strmap	 *nss;		/* namespace -> int[npools] */
	/* The maps of grants borrow their keys: a grant is unlinked before
	 * it is freed. */
	struct strmap	 *pinned;	/* claim uid -> strmap id -> grant */
	struct strmap	 *dirty;	/* id -> grant */
	struct strmap	 *cold;		/* id -> grant: cold start running */
	struct postings	 *attr;		/* (attribute, value) -> grants */
	unsigned long	  mark;		/* last index_mark */
	unsigned long	  visits;	/* containers affinities looked at */
};

void
index_init(struct policy *P)
{
	struct index	*x;
	int		 i;

	x = xcalloc(1, sizeof *x);
	x->npools = pool_tree_count(P->tree);
	x->shared = xcalloc((size_t)x->npools, sizeof *x->shared);
	for (i = 0; i < x->npools; i++)
		x->shared[i] = strmap_new_borrowing();
	x->ntype = xcalloc((size_t)x->npools, sizeof *x->ntype);
	x->seen = xcalloc((size_t)x->npools, sizeof *x->seen);
	x->pods = strmap_new();
	x->nss = strmap_new();
	x->pinned = strmap_new();
	x->dirty = strmap_new_borrowing();
	x->cold = strmap_new_borrowing();
	x->attr = postings_new();
	P->index = x;
}

static void
free_values(struct strmap *m)
{
	void	**v;
	size_t	  i, n;

	v = strmap_values(m, &n);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	strmap_free(m);
}

static void
free_maps(struct strmap *m)
{
	void	**v;
	size_t	  i, n;

	v = strmap_values(m, &n);
	for (i = 0; i < n; i++)
		strmap_free(v[i]);
	free(v);
	strmap_free(m);
}

void
index_clear(struct policy *P)
{
	struct index	*x = P->index;
	int		 i;

	if (x == NULL)
		return;
	for (i = 0; i < x->npools; i++)
		strmap_free(x->shared[i]);
	free(x->shared);
	free(x->ntype);
	free(x->seen);
	free_values(x->pods);
	free_values(x->nss);
	free_maps(x->pinned);
	strmap_free(x->dirty);
	strmap_free(x->cold);
	postings_free(x->attr);
	free(x);
	P->index = NULL;
}

/* Its pinning follows the free shared CPUs of its pool's path. */
static int
follows_supply(const struct grant *g)
{
	return (g->kind == GRANT_CONTAINER && g->pool != NULL &&
	    g->type == CPU_NORMAL &&
	    !(g->portion == 0 && !cpuset_empty(&g->exclusive)));
}

static void
count(struct index *x, struct strmap *m, const char *key, int pool, int d)
{
	int	*v;

	if (key == NULL)
		return;
	if ((v = strmap_get(m, key)) == NULL) {
		if (d < 0)
			return;
		v = xcalloc((size_t)x->npools, sizeof *v);
		strmap_put(m, key, v);
	}
	v[pool] += d;
}

static const char *
orempty(const char *s)
{
	return (s != NULL ? s : "");
}

static void
attr_one(struct postings *a, int tag, const char *k, const char *v,
    struct grant *g, int d)
{
	if (d > 0)
		postings_add(a, postings_hash(tag, k, v), g);
	else
		postings_del(a, postings_hash(tag, k, v), g);
}

static void
attr_labels(struct postings *a, int tag, const struct policy_kv *kv, int n,
    struct grant *g, int d)
{
	int	i;

	for (i = 0; i < n; i++) {
		attr_one(a, tag, kv[i].key, kv[i].value, g, d);
		attr_one(a, tag | ATTR_HAS, kv[i].key, NULL, g, d);
	}
}

/* What affinity expressions may look a container up by (index_attr). */
static void
attr_link(struct index *x, struct grant *g, int d)
{
	const struct cspec	*c = &g->spec;

	attr_one(x->attr, ATTR_NAME, NULL, orempty(c->name), g, d);
	attr_one(x->attr, ATTR_NS, NULL, orempty(c->ns), g, d);
	attr_one(x->attr, ATTR_QOS, NULL, expr_qos_name(c->qos), g, d);
	attr_labels(x->attr, ATTR_LABEL, c->labels, c->nlabels, g, d);
	if (c->pod == NULL)
		return;
	attr_one(x->attr, ATTR_POD_ID, NULL, c->pod, g, d);
	attr_one(x->attr, ATTR_POD_NAME, NULL, orempty(c->pod_name), g, d);
	attr_one(x->attr, ATTR_POD_UID, NULL, orempty(c->pod_uid), g, d);
	attr_labels(x->attr, ATTR_POD_LABEL, c->pod_labels, c->npod_labels,
	    g, d);
}

static void
link_one(struct policy *P, struct grant *g, int d)
{
	struct index	*x = P->index;
	struct strmap	*m;
	int		 i;

	if (g->pool != NULL) {
		x->ntype[g->pool->id][g->type] += d;
		if (P->cfg->colocate_pods)
			count(x, x->pods, g->spec.pod, g->pool->id, d);
		if (P->cfg->colocate_namespaces)
			count(x, x->nss, g->spec.ns, g->pool->id, d);
		if (g->kind == GRANT_CONTAINER)
			attr_link(x, g, d);
	}
	if (follows_supply(g)) {
		if (d > 0)
			strmap_put(x->shared[g->pool->id], g->key, g);
		else
			strmap_del(x->shared[g->pool->id], g->key);
	}
	for (i = 0; g->kind == GRANT_CLAIM_PINNED && i < g->nclaims; i++) {
		if ((m = strmap_get(x->pinned, g->claims[i])) == NULL) {
			if (d < 0)
				continue;
			m = strmap_new_borrowing();
			strmap_put(x->pinned, g->claims[i], m);
		}
		if (d > 0)
			strmap_put(m, g->key, g);
		else if (strmap_del(m, g->key) != NULL &&
		    strmap_count(m) == 0) {
			strmap_del(x->pinned, g->claims[i]);
			strmap_free(m);
		}
	}
	if (d > 0 && g->dirty)
		strmap_put(x->dirty, g->key, g);
	else if (d < 0)
		strmap_del(x->dirty, g->key);
	if (d > 0 && g->cold_until != 0 && !g->cold_done)
		strmap_put(x->cold, g->key, g);
	else if (d < 0)
		strmap_del(x->cold, g->key);
}

/* The containers whose cold start runs (started, not over); caller
 * frees the array. */
struct grant **
index_cold(const struct policy *P, size_t *n)
{
	return ((struct grant **)strmap_values(P->index->cold, n));
}

/* Containers only: claims are few and looked up by UID. */
void
index_link(struct policy *P, int claims, struct grant *g)
{
	if (!claims && g != NULL && P->index != NULL)
		link_one(P, g, 1);
}

void
index_unlink(struct policy *P, int claims, struct grant *g)
{
	if (!claims && g != NULL && P->index != NULL)
		link_one(P, g, -1);
}

void
index_dirty(struct policy *P, struct grant *g)
{
	g->dirty = 1;
	strmap_put(P->index->dirty, g->key, g);
}

/* Containers granted CPUs of one pool. */
int
index_ncontainers(const struct policy *P, int pool)
{
	const int	*n = P->index->ntype[pool];

	return (n[CPU_NORMAL] + n[CPU_RESERVED] + n[CPU_PRESERVE]);
}

/* Grants of one pool by CPU type. */
int
index_ntype(const struct policy *P, int pool, enum cpu_type type)
{
	return (P->index->ntype[pool][type]);
}

/* Grants of pod (or namespace) in each pool: NULL when none. */
const int *
index_pod(const struct policy *P, const char *pod)
{
	return (pod != NULL ? strmap_get(P->index->pods, pod) : NULL);
}

const int *
index_ns(const struct policy *P, const char *ns)
{
	return (ns != NULL ? strmap_get(P->index->nss, ns) : NULL);
}

/*
 * The containers in a pool whose attribute (a label's key for the label
 * attributes) is value, or, with value NULL, that have the label at all.
 * The list may hold others too (a hash's): check each. A pod's namespace
 * and QoS class are its containers'.
 */
struct grant *const *
index_attr(const struct policy *P, int attr, const char *label,
    const char *value, size_t *n)
{
	int	tag = attr == ATTR_POD_NS ? ATTR_NS :
	    attr == ATTR_POD_QOS ? ATTR_QOS : attr;

	if (value == NULL)
		tag |= ATTR_HAS;
	return ((struct grant *const *)postings_get(P->index->attr,
	    postings_hash(tag, label, value), n));
}

/* A new mark, for counting each grant once in one walk. */
unsigned long
index_mark(const struct policy *P)
{
	return (++P->index->mark);
}

/* Containers looked at by affinity walks, ever (tests count them). */
unsigned long
index_visit(const struct policy *P, int n)
{
	return (P->index->visits += (unsigned long)n);
}

/* The containers pinned to claim uid, in a new array (caller frees). */
struct grant **
index_pinned(const struct policy *P, const char *uid, size_t *n)
{
	struct strmap	*m = strmap_get(P->index->pinned, uid);

	if (m == NULL) {
		*n = 0;
		return (xcalloc(1, sizeof(struct grant *)));
	}
	return ((struct grant **)strmap_values(m, n));
}

/*
 * The containers whose pinning may have moved: the dirty ones, and those
 * of every pool whose path's supply changed since it was last looked at
 * (whose applied generation is behind). Into a new array; caller frees.
 */
struct grant **
index_moved(struct policy *P, size_t *n)
{
	struct index	 *x = P->index;
	struct grant	**v = NULL, **s;
	unsigned long	  gen;
	size_t		  k = 0, size = 0, i, ns;
	int		  id;

	s = (struct grant **)strmap_values(x->dirty, &ns);
	for (i = 0; i < ns; i++) {
		if (k == size) {
			size = size ? 2 * size : 16;
			v = xreallocarray(v, size, sizeof *v);
		}
		v[k++] = s[i];
	}
	free(s);
	for (id = 0; id < x->npools; id++) {
		gen = supply_path_gen(P, pool_tree_get(P->tree, id));
		if (gen == x->seen[id])
			continue;
		x->seen[id] = gen;
		s = (struct grant **)strmap_values(x->shared[id], &ns);
		for (i = 0; i < ns; i++) {
			if (s[i]->dirty || s[i]->applied_gen == gen)
				continue;
			if (k == size) {
				size = size ? 2 * size : 16;
				v = xreallocarray(v, size, sizeof *v);
			}
			v[k++] = s[i];
		}
		free(s);
	}
	*n = k;
	return (v);
}

/* What was dirty has been looked at. */
void
index_clean(struct policy *P)
{
	strmap_free(P->index->dirty);
	P->index->dirty = strmap_new_borrowing();
}
