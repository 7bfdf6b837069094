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

#include <endian.h>
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

/* postings_hash's key (postings_key), and how many postings exist. */
static uint64_t	key[2];
static int	tables;

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
	tables++;
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
	tables--;
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
 * Backward-shift deletion, for the slots and for a list's positions:
 * after the gap at i, the entry at j whose home is k stays where it is
 * when k lies cyclically in (i, j]; else it moves back into the gap.
 */
static int
stays(size_t i, size_t j, size_t k)
{
	return (i <= j ? (i < k && k <= j) : (i < k || k <= j));
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
		if (stays(i, j, k))
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
		if (stays(i, j, k))
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

/*
 * The hash is SipHash (Aumasson and Bernstein), keyed per process: the
 * strings are a pod's own labels and names, and with a hash anyone can
 * compute, a tenant could choose labels that all land on one home slot
 * and make every insert, delete and lookup near them walk one long run.
 */
int
postings_key(uint64_t k0, uint64_t k1)
{
	/* A table's entries sit where the key in force put them. */
	if (tables > 0)
		return (-1);
	key[0] = k0;
	key[1] = k1;
	return (0);
}

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

static inline uint64_t
siphash(const uint64_t k[2], const unsigned char *p, size_t len, int c,
    int d)
{
	const unsigned char	*end = p + (len & ~(size_t)7);
	uint64_t		 v0 = k[0] ^ 0x736f6d6570736575ULL;
	uint64_t		 v1 = k[1] ^ 0x646f72616e646f6dULL;
	uint64_t		 v2 = k[0] ^ 0x6c7967656e657261ULL;
	uint64_t		 v3 = k[1] ^ 0x7465646279746573ULL;
	uint64_t		 m, b = (uint64_t)len << 56;
	int			 i;

	for (; p != end; p += 8) {
		memcpy(&m, p, 8);
		m = le64toh(m);
		v3 ^= m;
		for (i = 0; i < c; i++)
			SIPROUND;
		v0 ^= m;
	}
	for (i = (int)(len & 7); i > 0; i--)
		b |= (uint64_t)p[i - 1] << (8 * (i - 1));
	v3 ^= b;
	for (i = 0; i < c; i++)
		SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	for (i = 0; i < d; i++)
		SIPROUND;
	return (v0 ^ v1 ^ v2 ^ v3);
}

uint64_t
postings_siphash(const uint64_t k[2], const void *data, size_t len, int c,
    int d)
{
	return (siphash(k, data, len, c, d));
}

/*
 * SipHash-1-3 of the tag (a word) and the strings, each string ended by
 * a byte that valid UTF-8 never holds (0xfe for a missing one).
 */
uint64_t
postings_hash(int tag, const char *a, const char *b)
{
	unsigned char	 buf[512], *msg = buf;
	const char	*str[2] = { a, b };
	size_t		 len[2], n = 8;
	uint64_t	 h, t = htole64((uint64_t)(unsigned)tag);
	int		 i;

	for (i = 0; i < 2; i++)
		n += (len[i] = str[i] != NULL ? strlen(str[i]) : 0) + 1;
	/* Longer than any name or label the policy keeps. */
	if (n > sizeof buf)
		msg = xmalloc(n);
	memcpy(msg, &t, 8);
	for (i = 0, n = 8; i < 2; i++) {
		if (str[i] == NULL) {
			msg[n++] = 0xfe;
			continue;
		}
		memcpy(msg + n, str[i], len[i]);
		n += len[i];
		msg[n++] = 0xff;
	}
	h = siphash(key, msg, n, 1, 3);
	if (msg != buf)
		free(msg);
	return (h);
}
