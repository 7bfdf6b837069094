/*
 * strmap.c owns the string map: open addressing with linear probing and
 * backward-shift deletion, so no tombstones pile up as containers come
 * and go. The table doubles at 50% load. A pooled map copies its keys
 * into blocks instead of one allocation each.
 */
#include "autoconf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "strpool.h"
#include "xmalloc.h"

struct slot {
	char	*key;
	void	*value;
	uint32_t hash;
};

struct strmap {
	size_t		 size;		/* power of two */
	size_t		 count;
	struct slot	*slots;
	int		 pooled;	/* keys in pool, not one malloc each */
	int		 borrowed;	/* keys are the caller's */
	struct strpool	 pool;
};

/*
 * Eight bytes a step, each mixed in by a multiply and a shift: the keys
 * are mostly 64-character container ids, which a byte at a time took as
 * long to hash as the rest of a lookup. In memory only: the order of a
 * walk is nobody's contract.
 */
static uint32_t
hash(const char *s)
{
	size_t		len = strlen(s), i;
	uint64_t	h = 0x9e3779b97f4a7c15ULL ^ len, w;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s + i, len - i);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdULL;
	return ((uint32_t)(h ^ (h >> 32)));
}

struct strmap *
strmap_new(void)
{
	struct strmap	*m;

	m = xcalloc(1, sizeof *m);
	m->size = 16;
	m->slots = xcalloc(m->size, sizeof *m->slots);
	return (m);
}

struct strmap *
strmap_new_pooled(void)
{
	struct strmap	*m = strmap_new();

	m->pooled = 1;
	return (m);
}

struct strmap *
strmap_new_borrowing(void)
{
	struct strmap	*m = strmap_new();

	m->borrowed = 1;
	return (m);
}

/* Whether the map frees its keys one by one. */
static int
owns_keys(const struct strmap *m)
{
	return (!m->pooled && !m->borrowed);
}

void
strmap_free(struct strmap *m)
{
	size_t	i;

	if (m == NULL)
		return;
	if (owns_keys(m))
		for (i = 0; i < m->size; i++)
			free(m->slots[i].key);
	strpool_clear(&m->pool);
	free(m->slots);
	free(m);
}

void
strmap_reset(struct strmap *m)
{
	size_t	i;

	/* Keys deleted since the last reset still hold their pool bytes. */
	strpool_reset(&m->pool);
	if (m->count == 0)
		return;
	if (owns_keys(m))
		for (i = 0; i < m->size; i++)
			free(m->slots[i].key);
	memset(m->slots, 0, m->size * sizeof *m->slots);
	m->count = 0;
}

void
strmap_free_all(struct strmap *m, void (*fn)(void *))
{
	size_t	i;

	if (m == NULL)
		return;
	for (i = 0; i < m->size; i++)
		if (m->slots[i].key != NULL)
			fn(m->slots[i].value);
	strmap_free(m);
}

static size_t
find(const struct strmap *m, const char *key, uint32_t h)
{
	size_t	i = h & (m->size - 1);

	while (m->slots[i].key != NULL) {
		if (m->slots[i].hash == h && strcmp(m->slots[i].key, key) == 0)
			return (i);
		i = (i + 1) & (m->size - 1);
	}
	return (i);
}

void *
strmap_get(const struct strmap *m, const char *key)
{
	size_t	i = find(m, key, hash(key));

	return (m->slots[i].key != NULL ? m->slots[i].value : NULL);
}

/* The table at size slots (a power of two, larger), rehashed. */
static void
resize(struct strmap *m, size_t size)
{
	struct slot	*old = m->slots;
	size_t		 oldsize = m->size, i, j;

	m->size = size;
	m->slots = xcalloc(m->size, sizeof *m->slots);
	for (i = 0; i < oldsize; i++) {
		if (old[i].key == NULL)
			continue;
		j = old[i].hash & (m->size - 1);
		while (m->slots[j].key != NULL)
			j = (j + 1) & (m->size - 1);
		m->slots[j] = old[i];
	}
	free(old);
}

static void
grow(struct strmap *m)
{
	resize(m, m->size * 2);
}

void
strmap_reserve(struct strmap *m, size_t n)
{
	size_t	size = m->size;

	/* Doubled as puts would double it, rehashed once. */
	while (n * 2 > size)
		size *= 2;
	if (size > m->size)
		resize(m, size);
}

/* Puts key in slot i, which find gave for hash h. */
static const char *
put_at(struct strmap *m, size_t i, const char *key, uint32_t h, void *value)
{
	char	*own;

	if (m->borrowed)
		own = (char *)key;
	else
		own = m->pooled ? strpool_dup(&m->pool, key) : xstrdup(key);

	m->slots[i].key = own;
	m->slots[i].value = value;
	m->slots[i].hash = h;
	if (++m->count * 2 > m->size)
		grow(m);
	return (own);
}

void
strmap_put(struct strmap *m, const char *key, void *value)
{
	uint32_t	h = hash(key);
	size_t		i = find(m, key, h);

	if (m->slots[i].key != NULL) {
		m->slots[i].value = value;
		/* The new value's own key: the old one may go with it. */
		if (m->borrowed)
			m->slots[i].key = (char *)key;
	} else
		(void)put_at(m, i, key, h, value);
}

const char *
strmap_add(struct strmap *m, const char *key, void *value)
{
	uint32_t	h = hash(key);
	size_t		i = find(m, key, h);

	if (m->slots[i].key != NULL)
		return (NULL);
	return (put_at(m, i, key, h, value));
}

void *
strmap_del(struct strmap *m, const char *key)
{
	size_t	 i, j, home;
	void	*value;

	i = find(m, key, hash(key));
	if (m->slots[i].key == NULL)
		return (NULL);
	value = m->slots[i].value;
	if (owns_keys(m))
		free(m->slots[i].key);
	m->slots[i].key = NULL;
	m->count--;
	/* Shift later members of the probe run back into the hole. */
	for (j = (i + 1) & (m->size - 1); m->slots[j].key != NULL;
	    j = (j + 1) & (m->size - 1)) {
		home = m->slots[j].hash & (m->size - 1);
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			m->slots[j].key = NULL;
			i = j;
		}
	}
	return (value);
}

size_t
strmap_count(const struct strmap *m)
{
	return (m->count);
}

void **
strmap_values(const struct strmap *m, size_t *n)
{
	void	**v;
	size_t	  i, k = 0;

	v = xcalloc(m->count + 1, sizeof *v);
	for (i = 0; i < m->size; i++)
		if (m->slots[i].key != NULL)
			v[k++] = m->slots[i].value;
	*n = k;
	return (v);
}

void
strmap_each(const struct strmap *m,
    void (*fn)(const char *, void *, void *), void *arg)
{
	size_t	i;

	for (i = 0; i < m->size; i++)
		if (m->slots[i].key != NULL)
			fn(m->slots[i].key, m->slots[i].value, arg);
}
