/*
 * test_strmap.c: the string map under container-sized load: every key
 * found after the table grew and after deletions shifted its neighbours
 * back, keys that differ in one byte anywhere (a whole word, the tail, the
 * length) kept apart, and strmap_add putting a key only once. And the
 * string pool a pooled map keeps its keys in.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"
#include "strpool.h"
#include "xmalloc.h"

#define NKEYS	3000

/* A 64-character id as the runtime makes them, from n. */
static void
id_of(unsigned n, char out[65])
{
	uint64_t	x = n * 0x9e3779b97f4a7c15ULL + 1;
	int		i;

	for (i = 0; i < 64; i++) {
		x ^= x >> 29;
		x *= 0xbf58476d1ce4e5b9ULL;
		out[i] = "0123456789abcdef"[(x >> 60) & 15];
	}
	out[64] = '\0';
}

Test(strmap, ids_found_after_growth_and_deletion)
{
	struct strmap	*m = strmap_new();
	char		 id[65];
	unsigned	 i;

	for (i = 0; i < NKEYS; i++) {
		id_of(i, id);
		strmap_put(m, id, (void *)(uintptr_t)(i + 1));
	}
	cr_assert_eq(strmap_count(m), NKEYS);
	/* Every other one goes: the rest are still where a lookup looks. */
	for (i = 0; i < NKEYS; i += 2) {
		id_of(i, id);
		cr_assert_eq((uintptr_t)strmap_del(m, id), i + 1);
	}
	cr_assert_eq(strmap_count(m), NKEYS / 2);
	for (i = 0; i < NKEYS; i++) {
		id_of(i, id);
		cr_assert_eq((uintptr_t)strmap_get(m, id), i % 2 ? i + 1 : 0,
		    "%s", id);
	}
	strmap_free(m);
}

Test(strmap, one_byte_apart_is_another_key)
{
	struct strmap	*m = strmap_new();
	char		 base[80], k[80];
	size_t		 len, pos;
	uintptr_t	 n = 0, want;

	memset(base, 'a', sizeof base - 1);
	base[sizeof base - 1] = '\0';
	/* Every length from 0 to 70, and each with one byte changed at
	 * every place: in a whole word and in the tail. */
	for (len = 0; len <= 70; len++) {
		memcpy(k, base, len);
		k[len] = '\0';
		strmap_put(m, k, (void *)++n);
		for (pos = 0; pos < len; pos++) {
			memcpy(k, base, len);
			k[len] = '\0';
			k[pos] = 'b';
			strmap_put(m, k, (void *)++n);
		}
	}
	cr_assert_eq(strmap_count(m), n, "%zu keys, %lu put",
	    strmap_count(m), (unsigned long)n);
	want = 0;
	for (len = 0; len <= 70; len++) {
		memcpy(k, base, len);
		k[len] = '\0';
		cr_assert_eq((uintptr_t)strmap_get(m, k), ++want);
		for (pos = 0; pos < len; pos++) {
			memcpy(k, base, len);
			k[len] = '\0';
			k[pos] = 'b';
			cr_assert_eq((uintptr_t)strmap_get(m, k), ++want,
			    "length %zu, byte %zu", len, pos);
		}
	}
	strmap_free(m);
}

Test(strmap, add_puts_once)
{
	struct strmap	*m = strmap_new();
	const char	*own;
	char		 key[] = "container";

	own = strmap_add(m, key, (void *)1);
	cr_assert_not_null(own);
	cr_assert_str_eq(own, "container");
	cr_assert_neq(own, key, "the map keeps a copy of its own");
	cr_assert_null(strmap_add(m, "container", (void *)2));
	cr_assert_eq((uintptr_t)strmap_get(m, "container"), 1,
	    "the value is kept");
	strmap_put(m, "container", (void *)3);
	cr_assert_eq((uintptr_t)strmap_get(m, "container"), 3);
	cr_assert_eq(strmap_count(m), 1);
	cr_assert_eq((uintptr_t)strmap_del(m, "container"), 3);
	cr_assert_not_null(strmap_add(m, "container", (void *)4));
	strmap_free(m);
}

/*
 * A pooled map holds its keys in blocks: every key it gave back is still
 * its text after many blocks were filled, keys longer than a block are
 * kept whole, a reset empties the map and the next round of keys (fewer,
 * then more than before) is found and given back as the first was.
 */
Test(strmap, pooled_keys_live_until_reset)
{
	struct strmap	*m = strmap_new_pooled();
	const char	*own[NKEYS], *first;
	char		 id[65], *big;
	unsigned	 i, round, n;

	big = xmalloc(20000);
	memset(big, 'b', 19999);
	big[19999] = '\0';
	for (round = 0; round < 3; round++) {
		n = round == 1 ? NKEYS / 3 : NKEYS;
		for (i = 0; i < n; i++) {
			id_of(i + round * 7, id);
			own[i] = strmap_add(m, id, (void *)(uintptr_t)(i + 1));
			cr_assert_not_null(own[i], "round %u key %u", round, i);
			if (i == 100) {
				big[0] = (char)('a' + round);
				cr_assert_str_eq(strmap_add(m, big, (void *)1),
				    big);
			}
		}
		cr_assert_eq(strmap_count(m), n + 1);
		for (i = 0; i < n; i += 3) {
			id_of(i + round * 7, id);
			cr_assert_str_eq(own[i], id);
			cr_assert_eq((uintptr_t)strmap_get(m, id), i + 1);
		}
		/* A deleted key is gone; the others keep their texts. */
		id_of(round * 7, id);
		cr_assert_eq((uintptr_t)strmap_del(m, id), 1);
		cr_assert_null(strmap_get(m, id));
		id_of(1 + round * 7, id);
		cr_assert_str_eq(own[1], id);
		cr_assert_null(strmap_add(m, id, (void *)9), "there once");
		strmap_reset(m);
		cr_assert_eq(strmap_count(m), 0);
		cr_assert_null(strmap_get(m, id));
		cr_assert_null(strmap_get(m, big));
	}
	/* Keys all deleted, then a reset: the next key takes the bytes of
	 * the first again, not new ones. */
	id_of(0, id);
	first = strmap_add(m, id, (void *)1);
	cr_assert_not_null(first);
	cr_assert_eq((uintptr_t)strmap_del(m, id), 1);
	cr_assert_eq(strmap_count(m), 0);
	strmap_reset(m);
	id_of(1, id);
	cr_assert_eq(strmap_add(m, id, (void *)1), first);
	/* A plain map is emptied by a reset as well, its keys freed. */
	strmap_free(m);
	m = strmap_new();
	for (i = 0; i < 100; i++) {
		id_of(i, id);
		cr_assert_not_null(strmap_add(m, id, (void *)1));
	}
	strmap_reset(m);
	cr_assert_eq(strmap_count(m), 0);
	id_of(5, id);
	cr_assert_null(strmap_get(m, id));
	cr_assert_not_null(strmap_add(m, id, (void *)2));
	strmap_free(m);
	free(big);
}

/* Room made ahead, empty or not, keeps every key findable. */
Test(strmap, reserve_keeps_what_is_there)
{
	struct strmap	*m = strmap_new();
	char		 id[65];
	unsigned	 i;

	for (i = 0; i < 100; i++) {
		id_of(i, id);
		strmap_put(m, id, (void *)(uintptr_t)(i + 1));
	}
	strmap_reserve(m, NKEYS);
	strmap_reserve(m, 10);
	for (i = 100; i < NKEYS; i++) {
		id_of(i, id);
		strmap_put(m, id, (void *)(uintptr_t)(i + 1));
	}
	cr_assert_eq(strmap_count(m), NKEYS);
	for (i = 0; i < NKEYS; i++) {
		id_of(i, id);
		cr_assert_eq((uintptr_t)strmap_get(m, id), i + 1, "key %u", i);
	}
	strmap_free(m);
}

/* An object keyed by a string it holds, as nri.c's and memalloc.c's. */
struct held {
	char	*key;
	int	 n;
};

static struct held *
held_new(const char *key, int n)
{
	struct held	*h = xmalloc(sizeof *h);

	h->key = xstrdup(key);
	h->n = n;
	return (h);
}

static void
held_free(void *p)
{
	struct held	*h = p;

	free(h->key);
	free(h);
}

/* The key the map holds for the value sought. */
struct seen_key {
	const void	*value;
	const char	*key;
};

static void
key_of(const char *key, void *value, void *arg)
{
	struct seen_key	*s = arg;

	if (value == s->value)
		s->key = key;
}

/*
 * A borrowing map keeps the very key pointers it is given, through
 * growth and deletions; a put again keeps the new value's key, so the old
 * value can go; the map frees no key (AddressSanitizer would see a
 * double free, LeakSanitizer a copy never freed).
 */
Test(strmap, borrowed_keys_are_the_callers)
{
	struct strmap	*m = strmap_new_borrowing();
	struct held	*h[NKEYS], *again;
	struct seen_key	 seen = { NULL, NULL };
	char		 id[65];
	unsigned	 i;

	for (i = 0; i < NKEYS; i++) {
		id_of(i, id);
		h[i] = held_new(id, (int)i);
		cr_assert_eq(strmap_add(m, h[i]->key, h[i]), h[i]->key);
	}
	for (i = 0; i < NKEYS; i += 2) {
		id_of(i, id);
		cr_assert_eq(strmap_del(m, id), h[i]);
		held_free(h[i]);
		h[i] = NULL;
	}
	for (i = 1; i < NKEYS; i += 2) {
		id_of(i, id);
		cr_assert_eq(strmap_get(m, id), h[i]);
	}
	/* Put again with another object of the same key; the first goes. */
	id_of(1, id);
	again = held_new(id, -1);
	seen.value = again;
	strmap_put(m, again->key, again);
	held_free(h[1]);
	h[1] = again;
	cr_assert_eq(strmap_get(m, id), again);
	strmap_each(m, key_of, &seen);
	cr_assert_eq(seen.key, again->key, "the map holds the new key");
	/* The map still finds it by its key, the old one's bytes gone:
	 * what a deletion compares is the new key. */
	cr_assert_eq(strmap_del(m, id), again);
	cr_assert_eq(strmap_add(m, again->key, again), again->key);
	cr_assert_eq(strmap_count(m), NKEYS / 2);
	strmap_free_all(m, held_free);
}

/*
 * Copies stay their text while blocks fill (short, empty, and longer than
 * a block), a reset refills the same blocks, and a cleared pool owns
 * nothing and takes copies again.
 */
Test(strpool, copies_live_until_reset)
{
	struct strpool	 sp = STRPOOL_INITIALIZER;
	char		*got[NKEYS], id[65], *big, *first;
	unsigned	 i, round;

	big = xmalloc(20001);
	memset(big, 'q', 20000);
	big[20000] = '\0';
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NKEYS; i++) {
			id_of(i + round, id);
			got[i] = i % 100 == 7 ? strpool_dup(&sp, big) :
			    i % 100 == 8 ? strpool_copy(&sp, id, 0) :
			    strpool_copy(&sp, id, 10 + i % 55);
		}
		for (i = 0; i < NKEYS; i++) {
			id_of(i + round, id);
			if (i % 100 == 7)
				cr_assert_str_eq(got[i], big);
			else if (i % 100 == 8)
				cr_assert_str_eq(got[i], "");
			else {
				cr_assert_eq(strlen(got[i]), 10 + i % 55);
				cr_assert_eq(memcmp(got[i], id, 10 + i % 55),
				    0);
			}
		}
		first = got[0];
		strpool_reset(&sp);
		/* The first copy after a reset is where the first was. */
		id_of(round, id);
		cr_assert_eq(strpool_dup(&sp, id), first);
		strpool_reset(&sp);
	}
	strpool_clear(&sp);
	cr_assert_null(sp.first);
	cr_assert_str_eq(strpool_dup(&sp, "again"), "again");
	strpool_clear(&sp);
	free(big);
}
