/*
 * Why a grant is where it is (topoawarectl explain): each placement keeps
 * a small immutable record of how it was decided, shared by reference
 * between a grant and its copies (undo, carry), at most
 * EXPLAIN_MAX_BYTES. For a placement by score it holds every weighed
 * pool's score components and the rule by which the winner beat it; when
 * there were more pools than fit, the winner and the closest losers
 * (those that lost on the latest rules) are kept and the rest counted.
 * Not saved: a restart keeps placements, not their reasons.
 */
#ifndef TOPOAWARE_EXPLAIN_H
#define TOPOAWARE_EXPLAIN_H

#include <jansson.h>

#include "score.h"

#define EXPLAIN_MAX_BYTES	1024

enum explain_how {
	EXPLAIN_SCORED = 0,	/* the best pool by score */
	EXPLAIN_KEPT,		/* its pool (on update, reload, restart)
				   could still take it */
	EXPLAIN_ROOT,		/* reserved or preserved: the root pool */
	EXPLAIN_CLAIMS,		/* pinned to its claims' CPUs */
	EXPLAIN_FALLBACK	/* already running, given the root's shared
				   CPUs: what it asked for did not fit */
};

struct explain;
struct pool_tree;

/*
 * A placement by score over the pools of tree: scores and rules by pool
 * id (the rule each pool lost by, as score_cmp names it; the winner's is
 * ignored), winner the chosen pool's id, target the unlimited Burstable
 * level (enum in policy_priv.h).
 */
struct explain	*explain_scored(const struct pool_tree *, int winner,
		     int target, const struct score *scores,
		     const char *const *rules);
/* Any other way: the pool's name (NULL for claims), and for KEPT the
 * decision that placed it there first (or NULL: not known). */
struct explain	*explain_other(enum explain_how, const char *pool,
		     struct explain *first);
struct explain	*explain_ref(struct explain *);
void		 explain_unref(struct explain *);
enum explain_how explain_how_of(const struct explain *);
size_t		 explain_size(const struct explain *);
/* The record as JSON: how, candidates, winner, deciding rule. */
json_t		*explain_json(const struct explain *);
/* A rule's place in the scorer's order of comparison, -1 unknown. */
int		 explain_rule_rank(const char *);

#endif
