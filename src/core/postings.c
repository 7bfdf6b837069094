/*
 * postings.c: open addressing with linear probing and backward-shift
 * deletion (no tombstones), grown at 3/4 full and never shrunk below
 * its start size. Hash 0 marks an empty slot, so real hashes avoid it.
 *
 * A long list (a value every container shares: its QoS class, a common
 * name or namespace) also keeps where each pointer sits, in a table of
 * positions after its pointers in the same allocation, so that a delete
 * finds its pointer at once rather than by a walk of the list: without
 * it, removing a container cost a walk of every container that shares a
 * value with it.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "postings.h"
#include "xmalloc.h"

#define START_SIZE	64
#define INDEXED		32	/* a list this long keeps its positions */

struct slot {
	uint64_t	 h;		/* 0: empty */
	uint32_t	 n;
	uint32_t	 cap;		/* 0: the one pointer is inline; from
					   INDEXED on, 2 * cap positions
					   follow the cap pointers */
	union {
		void	 *one;
		void	**many;
	} u;
};

struct postings {
	size_t		 size;		/* a power of two */
	size_t		 used;
	struct slot	*slots;
};

struct postings *
postings_new(void)
{
	struct postings	*p;

	p = xcalloc(1, sizeof *p);
	p->size = START_SIZE;
	p->slots = xcalloc(p->size, sizeof *p->slots);
	return (p);
}

void
postings_free(struct postings *p)
{
	size_t	i;

	if (p == NULL)
		return;
	for (i = 0; i < p->size; i++)
		if (p->slots[i].h != 0 && p->slots[i].cap > 0)
			free(p->slots[i].u.many);
	free(p->slots);
	free(p);
}

static uint64_t
fix(uint64_t h)
{
	return (h != 0 ? h : 1);
}

static struct slot *
find(const struct postings *p, uint64_t h)
{
	size_t	i = (size_t)h & (p->size - 1);

	while (p->slots[i].h != 0) {
		if (p->slots[i].h == h)
			return (&p->slots[i]);
		i = (i + 1) & (p->size - 1);
	}
	return (&p->slots[i]);
}

static void
grow(struct postings *p)
{
	struct slot	*old = p->slots, *s;
	size_t		 n = p->size, i;

	p->size *= 2;
	p->slots = xcalloc(p->size, sizeof *p->slots);
	for (i = 0; i < n; i++)
		if (old[i].h != 0) {
			s = find(p, old[i].h);
			*s = old[i];
		}
	free(old);
}

/*
 * The positions of a long list: 2 * cap entries, each 0 (free) or one
 * more than the index of a pointer in many, placed by the pointer's
 * hash with linear probing. A pointer that is in the list twice (two
 * keys whose hashes collide) has two entries.
 */
static uint32_t *
positions(const struct slot *s)
{
	return ((uint32_t *)(void *)(s->u.many + s->cap));
}

static size_t
pos_home(const void *v, size_t mask)
{
	uint64_t	x = (uint64_t)(uintptr_t)v;

	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ULL;
	return ((size_t)(x >> 32) & mask);
}

static void
pos_put(struct slot *s, uint32_t i)
{
	uint32_t	*t = positions(s);
	size_t		 mask = 2 * (size_t)s->cap - 1, j;

	j = pos_home(s->u.many[i], mask);
	while (t[j] != 0)
		j = (j + 1) & mask;
	t[j] = i + 1;
}

/* The entry of index i, which holds pointer v. */
static size_t
pos_of_index(const struct slot *s, const void *v, uint32_t i)
{
	const uint32_t	*t = positions(s);
	size_t		 mask = 2 * (size_t)s->cap - 1, j;

	j = pos_home(v, mask);
	while (t[j] != i + 1)
		j = (j + 1) & mask;
	return (j);
}

/* An entry of pointer v, or SIZE_MAX when v is not in the list. */
static size_t
pos_of_pointer(const struct slot *s, const void *v)
{
	const uint32_t	*t = positions(s);
	size_t		 mask = 2 * (size_t)s->cap - 1, j;

	for (j = pos_home(v, mask); t[j] != 0; j = (j + 1) & mask)
		if (s->u.many[t[j] - 1] == v)
			return (j);
	return (SIZE_MAX);
}

/* Frees entry j and moves later entries of its run back into the gap. */
static void
pos_remove(struct slot *s, size_t j)
{
	uint32_t	*t = positions(s);
	size_t		 mask = 2 * (size_t)s->cap - 1, i = j, k;

	t[i] = 0;
	for (;;) {
		j = (j + 1) & mask;
		if (t[j] == 0)
			return;
		k = pos_home(s->u.many[t[j] - 1], mask);
		/* Stays when its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t[i] = t[j];
		t[j] = 0;
		i = j;
	}
}

/* Doubles a list's room; from INDEXED on, its positions are made anew. */
static void
grow_list(struct slot *s)
{
	uint32_t	cap = s->cap * 2, i;

	if (cap < INDEXED) {
		s->u.many = xreallocarray(s->u.many, cap, sizeof(void *));
		s->cap = cap;
		return;
	}
	s->u.many = xreallocarray(s->u.many, cap,
	    sizeof(void *) + 2 * sizeof(uint32_t));
	s->cap = cap;
	memset(positions(s), 0, 2 * (size_t)cap * sizeof(uint32_t));
	for (i = 0; i < s->n; i++)
		pos_put(s, i);
}

void
postings_add(struct postings *p, uint64_t h, void *v)
{
	struct slot	*s;
	void		*first;

	h = fix(h);
	if (4 * (p->used + 1) > 3 * p->size)
		grow(p);
	s = find(p, h);
	if (s->h == 0) {
		s->h = h;
		s->n = 1;
		s->cap = 0;
		s->u.one = v;
		p->used++;
		return;
	}
	if (s->cap == 0) {
		first = s->u.one;
		s->cap = 4;
		s->u.many = xcalloc(s->cap, sizeof(void *));
		s->u.many[0] = first;
	} else if (s->n == s->cap)
		grow_list(s);
	s->u.many[s->n] = v;
	if (s->cap >= INDEXED)
		pos_put(s, s->n);
	s->n++;
}

/* Empties slot s and moves later entries of its run back into the gap. */
static void
remove_slot(struct postings *p, struct slot *s)
{
	size_t	i = (size_t)(s - p->slots), j = i, k;

	/* An empty slot is all zero: nothing of it is freed again. */
	memset(&p->slots[i], 0, sizeof p->slots[i]);
	p->used--;
	for (;;) {
		j = (j + 1) & (p->size - 1);
		if (p->slots[j].h == 0)
			return;
		k = (size_t)p->slots[j].h & (p->size - 1);
		/* Stays when its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		p->slots[i] = p->slots[j];
		memset(&p->slots[j], 0, sizeof p->slots[j]);
		i = j;
	}
}

void
postings_del(struct postings *p, uint64_t h, void *v)
{
	struct slot	*s;
	size_t		 j;
	uint32_t	 i, last;

	h = fix(h);
	s = find(p, h);
	if (s->h == 0)
		return;
	if (s->cap == 0) {
		if (s->u.one == v)
			remove_slot(p, s);
		return;
	}
	last = s->n - 1;
	if (s->cap >= INDEXED) {
		if ((j = pos_of_pointer(s, v)) == SIZE_MAX)
			return;
		i = positions(s)[j] - 1;
		pos_remove(s, j);
		if (i != last)
			positions(s)[pos_of_index(s, s->u.many[last], last)] =
			    i + 1;
	} else {
		for (i = 0; i < s->n; i++)
			if (s->u.many[i] == v)
				break;
		if (i == s->n)
			return;
	}
	s->u.many[i] = s->u.many[last];
	s->n = last;
	if (s->n == 0) {
		free(s->u.many);
		remove_slot(p, s);
	}
}

void *const *
postings_get(const struct postings *p, uint64_t h, size_t *n)
{
	struct slot	*s = find(p, fix(h));

	if (s->h == 0) {
		*n = 0;
		return (NULL);
	}
	*n = s->n;
	return (s->cap == 0 ? &s->u.one : s->u.many);
}

/* FNV-1a over the tag and the strings, each ended by a distinct byte. */
uint64_t
postings_hash(int tag, const char *a, const char *b)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	const char	*s;
	int		 part;

	h = (h ^ (uint64_t)(unsigned)tag) * 0x100000001b3ULL;
	for (part = 0; part < 2; part++) {
		s = part == 0 ? a : b;
		if (s == NULL) {
			h = (h ^ 0xfe) * 0x100000001b3ULL;
			continue;
		}
		for (; *s != '\0'; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL;
	}
	return (h);
}
