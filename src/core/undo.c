/*
 * undo.c owns what a policy operation changed, so that it can be put back
 * (policy_undo) when the change cannot be made durable, and so that the
 * journal can say which grants changed (policy_changes). Every change to
 * a policy's state goes through the helpers here: a grant put into or
 * taken out of its map (the grant it replaced is kept, not freed), a
 * pool's free supply before its first change, a container's applied
 * pinning, and a whole state swapped for a new one (sync, reconfigure).
 * Without an operation in progress (P->undo NULL: a policy being built or
 * restored) nothing is kept. The log is the operation's: it lives in its
 * policy_effects and ends with them (policy_effects_clear keeps what was
 * done, policy_undo puts back what was).
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "policy_priv.h"
#include "xmalloc.h"

enum undo_kind {
	UNDO_GRANT,		/* a grant put or taken: the one before */
	UNDO_SUPPLY,		/* a pool's supply before its first change */
	UNDO_APPLIED,		/* a container's applied pinning before */
	UNDO_SWAP,		/* a whole state before (sync, reconfigure) */
	UNDO_MEM		/* memory zones before (memgrant.c) */
};

struct undo_entry {
	enum undo_kind	 kind;
	int		 claims;	/* GRANT: the claims' map */
	char		*key;		/* GRANT, APPLIED (unless applied.id
					 * is the key) */
	struct grant	*old;		/* GRANT: NULL when there was none */
	int		 pool;		/* SUPPLY */
	struct supply	 sup;
	struct pinning	 applied;	/* APPLIED, when has_pin */
	int		 has_pin;
	unsigned long	 applied_gen;
	int		 dirty;
	struct policy	*before;	/* SWAP */
	struct memalloc_log mem;	/* MEM */
};

struct undolog {
	struct undo_entry	*v;
	int			 n;
	int			 size;
	int			 npools;
	unsigned char		*touched;	/* pools saved, by id */
};

static struct undo_entry *
entry_add(struct undolog *u, enum undo_kind kind)
{
	struct undo_entry	*e;

	if (u->n == u->size) {
		u->size = u->size ? 2 * u->size : 16;
		u->v = xreallocarray(u->v, (size_t)u->size, sizeof *u->v);
	}
	e = &u->v[u->n++];
	memset(e, 0, sizeof *e);
	e->kind = kind;
	return (e);
}

/* Frees what an entry kept, the grant or state it holds included. */
static void
entry_clear(struct undo_entry *e)
{
	free(e->key);
	grant_free(e->old);
	if (e->kind == UNDO_SUPPLY) {
		cpuset_clear(&e->sup.isolated);
		cpuset_clear(&e->sup.sharable);
	}
	pinning_clear(&e->applied);
	policy_free(e->before);
	memalloc_log_clear(&e->mem);
	memset(e, 0, sizeof *e);
}

/* Every entry cleared, the log's room kept. */
static void
undolog_empty(struct undolog *u)
{
	int	i;

	for (i = 0; i < u->n; i++)
		entry_clear(&u->v[i]);
	u->n = 0;
	if (u->touched != NULL)
		memset(u->touched, 0, (size_t)u->npools);
}

/*
 * One emptied log is kept for the next operation, whatever policy it is
 * of: a claim logs hundreds of entries, and giving their room back after
 * each (a free that large makes malloc consolidate every small free
 * before it) and growing it again cost more than the entries. One
 * operation at a time, as the policy is single-threaded; a log larger
 * than UNDO_KEEP_MAX entries (a Synchronize's) is given back.
 */
#define UNDO_KEEP_MAX	1024

static struct undolog	*kept_log;

static struct undolog *
undolog_new(void)
{
	struct undolog	*u = kept_log;

	if (u == NULL)
		return (xcalloc(1, sizeof *u));
	kept_log = NULL;
	return (u);
}

void
undolog_free(struct undolog *u)
{
	if (u == NULL)
		return;
	undolog_empty(u);
	if (kept_log == NULL && u->size <= UNDO_KEEP_MAX) {
		kept_log = u;
		return;
	}
	free(u->v);
	free(u->touched);
	free(u);
}

/*
 * An operation starts: its changes go to fx's log, or to the log of the
 * operation it is part of, or (fx NULL) to a log of its own that undo_end
 * drops. undo_fail puts back what it changed since undo_begin.
 */
void
undo_begin(struct policy *P, struct policy_effects *fx, struct undoctx *u)
{
	u->outer = P->undo;
	u->own = NULL;
	if (P->undo == NULL) {
		if (fx != NULL) {
			if (fx->undo == NULL)
				fx->undo = undolog_new();
			P->undo = fx->undo;
		} else
			P->undo = u->own = undolog_new();
	}
	u->mark = P->undo->n;
}

void
undo_fail(struct policy *P, struct undoctx *u)
{
	undo_to(P, u->mark);
}

void
undo_end(struct policy *P, struct undoctx *u)
{
	struct undolog	*own = u->own;

	P->undo = u->outer;
	u->own = NULL;
	undolog_free(own);
}

static struct strmap *
map_of(struct policy *P, int claims)
{
	return (claims ? P->claims : P->ctrs);
}

/* The budget's sum follows the containers' map, both ways (an undo too):
 * out leaves it, in enters it; either may be NULL. */
static void
account(struct policy *P, int claims, const struct grant *out,
    const struct grant *in)
{
	if (claims)
		return;
	if (out != NULL)
		P->kept -= out->spec.cost;
	if (in != NULL)
		P->kept += in->spec.cost;
}

/*
 * Puts g under its key in P's containers (claims: 0) or claims, or takes
 * the key out (g NULL). The grant it replaces is kept for an undo, or
 * freed when no operation is in progress.
 */
void
policy_put(struct policy *P, int claims, const char *key, struct grant *g)
{
	struct strmap		*m = map_of(P, claims);
	struct grant		*old;
	struct undo_entry	*e;

	old = g != NULL ? strmap_get(m, key) : strmap_del(m, key);
	if (old == g)
		return;
	index_unlink(P, claims, old);
	if (g != NULL) {
		/* The maps borrow the grant's own key (g's is key). */
		strmap_put(m, g->key, g);
		index_link(P, claims, g);
	}
	account(P, claims, old, g);
	if (P->undo == NULL) {
		grant_free(old);
		return;
	}
	e = entry_add(P->undo, UNDO_GRANT);
	e->claims = claims;
	e->key = xstrdup(key);
	e->old = old;
}

/* Before pool id's supply changes. */
void
undo_supply(struct policy *P, int id)
{
	struct undolog		*u = P->undo;
	struct undo_entry	*e;
	int			 n = pool_tree_count(P->tree);

	if (u == NULL)
		return;
	if (u->touched == NULL || u->npools != n) {
		free(u->touched);
		u->touched = xcalloc((size_t)n, 1);
		u->npools = n;
	}
	if (u->touched[id])
		return;
	u->touched[id] = 1;
	e = entry_add(u, UNDO_SUPPLY);
	e->pool = id;
	e->sup = P->sup[id];
	cpuset_init(&e->sup.isolated);
	cpuset_init(&e->sup.sharable);
	cpuset_copy(&e->sup.isolated, &P->sup[id].isolated);
	cpuset_copy(&e->sup.sharable, &P->sup[id].sharable);
}

/*
 * What g had applied, before a refresh replaces it: moved into the log,
 * not copied, and g->applied is left empty for the new pinning (freed
 * when there is no log). With pin 0 the pinning stays and only when it
 * was applied is kept.
 */
void
undo_applied_move(struct policy *P, struct grant *g, int pin)
{
	struct undo_entry	*e;

	if (P->undo == NULL) {
		if (pin)
			pinning_clear(&g->applied);
		return;
	}
	e = entry_add(P->undo, UNDO_APPLIED);
	pinning_init(&e->applied);
	if (pin) {
		e->applied = g->applied;
		pinning_init(&g->applied);
	}
	/* A pinning's id is its container's key, most often: no copy. */
	if (e->applied.id == NULL || strcmp(e->applied.id, g->key) != 0)
		e->key = xstrdup(g->key);
	e->has_pin = pin;
	e->applied_gen = g->applied_gen;
	e->dirty = g->dirty;
}

/*
 * P now holds a new state and before the one it replaced (policy_swap):
 * before is kept for an undo, or freed.
 */
void
undo_swapped(struct policy *P, struct policy *before)
{
	struct undo_entry	*e;
	struct undolog		*u = before->undo;

	/* policy_swap moved the log with the state: it stays with P. */
	before->undo = NULL;
	P->undo = u;
	if (u == NULL) {
		policy_free(before);
		return;
	}
	/* The supply saved so far was the old state's. */
	if (u->touched != NULL)
		memset(u->touched, 0, (size_t)u->npools);
	e = entry_add(u, UNDO_SWAP);
	e->before = before;
}

/*
 * What the memory allocator changed: log's entries move into the undo
 * log (log is left empty), or are dropped without an operation.
 */
void
undo_mem(struct policy *P, struct memalloc_log *log)
{
	struct undo_entry	*e;

	if (P->undo == NULL || log->n == 0) {
		memalloc_log_clear(log);
		return;
	}
	e = entry_add(P->undo, UNDO_MEM);
	e->mem = *log;
	memset(log, 0, sizeof *log);
}

/* A request put into the allocator as saved (memalloc_restore): its
 * undo takes it out. */
void
undo_mem_restored(struct policy *P, const char *key)
{
	struct memalloc_log	log;

	memset(&log, 0, sizeof log);
	log.v = xcalloc(1, sizeof *log.v);
	log.size = log.n = 1;
	log.v[0].id = xstrdup(key);
	log.v[0].after = memalloc_zone_of(P->mem, key);
	undo_mem(P, &log);
}

static void
revert(struct policy *P, struct undo_entry *e)
{
	struct strmap	*m;
	struct grant	*cur, *g;
	int		 i;

	switch (e->kind) {
	case UNDO_GRANT:
		m = map_of(P, e->claims);
		cur = strmap_get(m, e->key);
		index_unlink(P, e->claims, cur);
		if (e->old != NULL) {
			strmap_put(m, e->old->key, e->old);
			index_link(P, e->claims, e->old);
		} else
			strmap_del(m, e->key);
		account(P, e->claims, cur, e->old);
		e->old = NULL;
		if (cur != NULL)
			grant_free(cur);
		break;
	case UNDO_SUPPLY:
		/* A new stamp: what depended on it is redone. */
		cpuset_move(&P->sup[e->pool].isolated, &e->sup.isolated);
		cpuset_move(&P->sup[e->pool].sharable, &e->sup.sharable);
		P->sup[e->pool].granted_shared = e->sup.granted_shared;
		P->sup[e->pool].granted_reserved = e->sup.granted_reserved;
		P->sup[e->pool].zero_req = e->sup.zero_req;
		supply_stamp(P, e->pool);
		break;
	case UNDO_APPLIED:
		if ((g = strmap_get(P->ctrs, e->key != NULL ? e->key :
		    e->applied.id)) == NULL)
			break;
		if (e->has_pin) {
			pinning_clear(&g->applied);
			g->applied = e->applied;
			pinning_init(&e->applied);
		}
		g->applied_gen = e->applied_gen;
		/* Its pool's supply may have moved on: look again. */
		index_dirty(P, g);
		break;
	case UNDO_MEM:
		for (i = 0; i < e->mem.n; i++)
			if ((g = strmap_get(P->ctrs, e->mem.v[i].id)) != NULL)
				index_dirty(P, g);
		memalloc_revert(P->mem, &e->mem);
		break;
	case UNDO_SWAP:
		policy_swap(P, e->before);
		P->undo = e->before->undo;
		e->before->undo = NULL;
		break;
	}
	entry_clear(e);
}

/* Puts back every change after mark (undo_mark), newest first. */
void
undo_to(struct policy *P, int mark)
{
	struct undolog	*u = P->undo;

	if (u == NULL)
		return;
	while (u->n > mark) {
		u->n--;
		if (u->v[u->n].kind == UNDO_SUPPLY && u->touched != NULL)
			u->touched[u->v[u->n].pool] = 0;
		revert(P, &u->v[u->n]);
	}
}

void
policy_undo(struct policy *P, struct policy_effects *fx)
{
	struct undolog	*outer = P->undo;

	if (fx->undo == NULL)
		return;
	P->undo = fx->undo;
	undo_to(P, 0);
	P->undo = outer;
	undolog_free(fx->undo);
	fx->undo = NULL;
}

/* The whole state an operation swapped out (sync, reconfigure), or NULL
 * when it swapped none: borrowed from fx's log. */
const struct policy *
undo_before(const struct policy_effects *fx)
{
	int	i;

	for (i = 0; fx->undo != NULL && i < fx->undo->n; i++)
		if (fx->undo->v[i].kind == UNDO_SWAP)
			return (fx->undo->v[i].before);
	return (NULL);
}

/* The containers whose memory zones a log moved, each once. */
static int
mem_changes(const struct policy *P, const struct memalloc_log *log,
    struct strmap *seen, struct policy_change *v, int n)
{
	int	i;

	for (i = 0; i < log->n; i++) {
		if (strmap_get(seen, log->v[i].id) != NULL)
			continue;
		strmap_put(seen, log->v[i].id, &v[n]);
		v[n].claim = 0;
		v[n].key = log->v[i].id;
		v[n].grant = strmap_get(P->ctrs, log->v[i].id);
		n++;
	}
	return (n);
}

int
policy_effects_whole(const struct policy_effects *fx)
{
	const struct undolog	*u = fx->undo;
	int			 i;

	for (i = 0; u != NULL && i < u->n; i++)
		if (u->v[i].kind == UNDO_SWAP)
			return (1);
	return (0);
}

/*
 * The grants an operation changed, each once, as they are now (grant NULL:
 * taken out); -1 when it replaced the whole state. The array borrows from
 * fx and P; caller frees it.
 */
int
policy_changes(const struct policy *P, const struct policy_effects *fx,
    struct policy_change **out)
{
	const struct undolog	*u = fx->undo;
	struct policy_change	*v;
	struct strmap		*seen[2];
	int			 i, c, n = 0;

	*out = NULL;
	if (u == NULL)
		return (0);
	if (policy_effects_whole(fx))
		return (-1);
	seen[0] = strmap_new();
	seen[1] = strmap_new();
	for (i = 0, c = u->n + 1; i < u->n; i++)
		if (u->v[i].kind == UNDO_MEM)
			c += u->v[i].mem.n;
	v = xcalloc((size_t)c, sizeof *v);
	for (i = 0; i < u->n; i++) {
		if (u->v[i].kind == UNDO_MEM)
			n = mem_changes(P, &u->v[i].mem, seen[0], v, n);
		if (u->v[i].kind != UNDO_GRANT)
			continue;
		c = u->v[i].claims;
		if (strmap_get(seen[c], u->v[i].key) != NULL)
			continue;
		strmap_put(seen[c], u->v[i].key, &v[n]);
		v[n].claim = c;
		v[n].key = u->v[i].key;
		v[n].grant = strmap_get(c ? P->claims : P->ctrs, u->v[i].key);
		n++;
	}
	strmap_free(seen[0]);
	strmap_free(seen[1]);
	*out = v;
	return (n);
}
