/*
 * A pod's affinity and anti-affinity annotations
 * (resource-policy.nri.io/affinity, .../anti-affinity), parsed as the Go
 * policy reads them: YAML keyed by container name, either the short form
 * "ctr: [ other, ... ]" (made symmetric: other is drawn to ctr too) or
 * the full form of scope, match and weight. Parsing is pure: it takes the
 * annotation's text and gives one container's affinities or an error
 * with its line and column.
 */
#ifndef TOPOAWARE_AFFINITY_H
#define TOPOAWARE_AFFINITY_H

#include "expr.h"

#define AFFINITY_KEY		"resource-policy.nri.io/affinity"
#define ANTI_AFFINITY_KEY	"resource-policy.nri.io/anti-affinity"
#define AFFINITY_MAX_WEIGHT	1000	/* weights are clamped to +-this */
#define AFFINITY_MAX_RULES	32	/* affinities of one container */

struct affinity {
	int		pod_scope;	/* no scope given: the container's pod */
	struct expr	scope;		/* else this */
	struct expr	match;
	int		weight;		/* negative: anti-affinity */
};

struct affinity_set {
	int		 n;
	struct affinity	*v;
};

/*
 * Adds to set the affinities the annotation text gives the container
 * named name (anti for the anti-affinity annotation). The whole text is
 * checked, not only that container's part. On error the set is as it
 * was and *cause says what and where.
 */
int	affinity_parse(const char *text, int anti, const char *name,
	    struct affinity_set *set, char **cause);
void	affinity_set_clear(struct affinity_set *);

#endif
