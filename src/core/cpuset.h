/*
 * CPU sets: dynamic bitmaps of ids 0..CPUSET_MAX_ID, with the kernel's list
 * text form ("0-3,8,10-11"). The same type holds sets of NUMA node ids.
 *
 * A struct cpuset is embedded by value: cpuset_init() makes an empty set
 * that owns nothing, cpuset_clear() gives its storage back. Every operation
 * grows the destination as needed and never fails for lack of memory
 * (xmalloc aborts). Operations that take an id return -ERANGE for an id
 * outside 0..CPUSET_MAX_ID.
 */
#ifndef TOPOAWARE_CPUSET_H
#define TOPOAWARE_CPUSET_H

#include <stdint.h>

#define CPUSET_MAX_ID	8191
#define CPUSET_SETSIZE	(CPUSET_MAX_ID + 1)

struct cpuset {
	uint32_t	 nwords;	/* words allocated in w */
	uint64_t	*w;
};

#define CPUSET_INITIALIZER	{ 0, NULL }

void		 cpuset_init(struct cpuset *);
void		 cpuset_clear(struct cpuset *);
struct cpuset	*cpuset_new(void);
void		 cpuset_free(struct cpuset *);

/* Gives back the words past the last one set: for a set kept long as it
 * is (a topology's), which growing set by set may have doubled. */
void		 cpuset_trim(struct cpuset *);
void		 cpuset_zero(struct cpuset *);
int		 cpuset_add(struct cpuset *, int);
int		 cpuset_add_range(struct cpuset *, int, int);
/* Adds the ids 0 to 63 whose bits are set in the word. */
void		 cpuset_add_low(struct cpuset *, uint64_t);
void		 cpuset_del(struct cpuset *, int);
int		 cpuset_has(const struct cpuset *, int);

void		 cpuset_copy(struct cpuset *, const struct cpuset *);
void		 cpuset_move(struct cpuset *, struct cpuset *);
void		 cpuset_or(struct cpuset *, const struct cpuset *);
void		 cpuset_and(struct cpuset *, const struct cpuset *);
void		 cpuset_andnot(struct cpuset *, const struct cpuset *);

int		 cpuset_count(const struct cpuset *);
int		 cpuset_and_count(const struct cpuset *, const struct cpuset *);
int		 cpuset_empty(const struct cpuset *);
int		 cpuset_equal(const struct cpuset *, const struct cpuset *);
int		 cpuset_subset(const struct cpuset *, const struct cpuset *);
int		 cpuset_intersects(const struct cpuset *, const struct cpuset *);
int		 cpuset_cmp(const struct cpuset *, const struct cpuset *);
/* Equal sets hash alike, whatever words each holds. */
uint64_t	 cpuset_hash(const struct cpuset *);

int		 cpuset_first(const struct cpuset *);
int		 cpuset_next(const struct cpuset *, int);
int		 cpuset_last(const struct cpuset *);

/* Parse the list form; "" and whitespace are the empty set. On error *cause
 * (caller frees) names the offending text and the set is left empty. */
int		 cpuset_parse(struct cpuset *, const char *, char **);
/* The list form, caller frees; "" for the empty set. */
char		*cpuset_format(const struct cpuset *);
/* The list form into buf, whole and NUL-ended when what it returns, its
 * length, is less than size (as snprintf): no allocation for a set
 * written into a bigger text. */
size_t		 cpuset_format_to(const struct cpuset *, char *buf, size_t size);

#define CPUSET_FOREACH(id, set) \
	for ((id) = cpuset_first(set); (id) >= 0; (id) = cpuset_next((set), (id)))

#endif
