/*
 * The policy's live invariants (topoawarectl check): what must hold of its
 * grants whatever happened before. No CPU is held by two grants; every
 * grant's CPUs lie in its pool's static supply and no longer in its free
 * sets; each pool's free sets and granted portions are what its grants
 * leave; a claim's CPUs lie in the NUMA nodes of the devices it was
 * granted from; a container pinned to claims runs on exactly their CPUs.
 * Pure: it reads the policy and names what it finds.
 */
#ifndef TOPOAWARE_INVARIANTS_H
#define TOPOAWARE_INVARIANTS_H

#include <jansson.h>

struct policy;

/* More are counted, not named: a broken state must not make a huge reply. */
#define VIOLATIONS_MAX	256

struct violation {
	char	*kind;		/* "cpu-twice", "outside-pool", ... */
	char	*what;		/* "container <id>", "claim <uid>", ... */
	char	*detail;
};

struct violations {
	int			 n;
	int			 dropped;	/* past VIOLATIONS_MAX */
	struct violation	*v;
};

void	violations_init(struct violations *);
void	violations_clear(struct violations *);
void	violations_add(struct violations *, const char *kind,
	    const char *what, const char *fmt, ...)
	    __attribute__((__format__(__printf__, 4, 5)));
/* [{"kind","what","detail"}], a new reference. */
json_t	*violations_json(const struct violations *);

/* Adds what the policy breaks to vs; returns how many were added. */
int	invariants_check(const struct policy *, struct violations *);

#endif
