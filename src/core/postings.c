/*
 * postings.c: open addressing with linear probing and backward-shift
 * deletion (no tombstones), grown at 3/4 full and never shrunk below
 * its start size. Hash 0 marks an empty slot, so real hashes avoid it.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "postings.h"
#include "xmalloc.h"

#define START_SIZE	64

struct slot {
	uint64_t	 h;		/* 0: empty */
	uint32_t	 n;
	uint32_t	 cap;		/* 0: the one pointer is inline */
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
	} else if (s->n == s->cap) {
		s->cap *= 2;
		s->u.many = xreallocarray(s->u.many, s->cap, sizeof(void *));
	}
	s->u.many[s->n++] = v;
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
	uint32_t	 i;

	h = fix(h);
	s = find(p, h);
	if (s->h == 0)
		return;
	if (s->cap == 0) {
		if (s->u.one == v)
			remove_slot(p, s);
		return;
	}
	for (i = 0; i < s->n; i++)
		if (s->u.many[i] == v)
			break;
	if (i == s->n)
		return;
	s->u.many[i] = s->u.many[--s->n];
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
