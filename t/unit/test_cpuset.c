/*
 * test_cpuset.c: the list form (R-TOPO-2) both ways, garbage refused with
 * the offending text named, and the set algebra.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "textbuf.h"
#include "xmalloc.h"
#include "testlib.h"

static void
roundtrip(const char *in, const char *want)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	char		*cause = NULL, *out;

	cr_assert_eq(cpuset_parse(&s, in, &cause), 0, "\"%s\": %s", in,
	    cause ? cause : "");
	out = cpuset_format(&s);
	cr_assert_str_eq(out, want, "\"%s\" formats as \"%s\"", in, out);
	free(out);
	cpuset_clear(&s);
}

Test(cpuset, list_form)
{
	roundtrip("", "");
	roundtrip("  \n", "");
	roundtrip("0", "0");
	roundtrip("0-3,8", "0-3,8");
	roundtrip("4,5", "4-5");
	roundtrip("8,0,1,2,3", "0-3,8");
	roundtrip("0-3,2-5", "0-5");
	roundtrip("10-11,0,63,64,127,128\n", "0,10-11,63-64,127-128");
	roundtrip("8191", "8191");
	roundtrip("0-8191", "0-8191");
	roundtrip("7-7", "7");
}

static void
refused(const char *in, const char *named)
{
	struct cpuset	 s = CPUSET_INITIALIZER;
	char		*cause = NULL;

	cpuset_add(&s, 1);
	cr_assert_eq(cpuset_parse(&s, in, &cause), -EINVAL, "\"%s\" accepted",
	    in);
	cr_assert_not_null(cause);
	cr_assert_not_null(strstr(cause, named), "cause \"%s\" does not name "
	    "\"%s\"", cause, named);
	cr_assert(cpuset_empty(&s), "a refused parse leaves the set empty");
	free(cause);
	cpuset_clear(&s);
}

Test(cpuset, garbage_refused)
{
	refused("1-", "\"1-\"");
	refused("3-1", "3-1");
	refused("a", "\"a\"");
	refused("1,a", "\"a\"");
	refused("1,,2", "\"1,,2\"");
	refused("1,", "\"1,\"");
	refused("-1", "\"-1\"");
	refused("8192", "above 8191");
	refused("0-9000", "above 8191");
	refused("99999999999999999999999", "above 8191");
	refused("1 2", "\"1 2\"");
	refused("0-7:2", "0-7:2");
}

Test(cpuset, ids_out_of_range)
{
	struct cpuset	s = CPUSET_INITIALIZER;

	cr_assert_eq(cpuset_add(&s, 8192), -ERANGE);
	cr_assert_eq(cpuset_add(&s, -1), -ERANGE);
	cr_assert_eq(cpuset_add(&s, 8191), 0);
	cr_assert(cpuset_has(&s, 8191));
	cr_assert(!cpuset_has(&s, 100000));
	cr_assert_eq(cpuset_add_range(&s, 5, 4), -ERANGE);
	cpuset_clear(&s);
}

Test(cpuset, algebra)
{
	struct cpuset	*a = testlib_set("0-7,64-65"), *b = testlib_set("4-11");
	struct cpuset	 c = CPUSET_INITIALIZER;

	cpuset_copy(&c, a);
	cpuset_or(&c, b);
	testlib_assert_set(&c, "0-11,64-65");
	cpuset_copy(&c, a);
	cpuset_and(&c, b);
	testlib_assert_set(&c, "4-7");
	cpuset_copy(&c, a);
	cpuset_andnot(&c, b);
	testlib_assert_set(&c, "0-3,64-65");
	cr_assert_eq(cpuset_and_count(a, b), 4);
	cr_assert(cpuset_intersects(a, b));
	cr_assert(!cpuset_subset(a, b));
	cpuset_copy(&c, b);
	cpuset_and(&c, a);
	cr_assert(cpuset_subset(&c, a) && cpuset_subset(&c, b));
	cr_assert(!cpuset_equal(a, b));
	cpuset_copy(&c, a);
	cr_assert(cpuset_equal(&c, a));
	/* A short set and a long one that only differ in zero words. */
	cpuset_del(&c, 64);
	cpuset_del(&c, 65);
	cpuset_clear(b);
	cpuset_add_range(b, 0, 7);
	cr_assert(cpuset_equal(&c, b));
	cpuset_zero(&c);
	cr_assert(cpuset_empty(&c));
	cr_assert_eq(cpuset_count(&c), 0);
	cpuset_free(a);
	cpuset_free(b);
	cpuset_clear(&c);
}

/* The low word added at once is its ids added one by one. */
Test(cpuset, low_word_added_at_once)
{
	struct cpuset	a = CPUSET_INITIALIZER, b = CPUSET_INITIALIZER;
	uint64_t	w;
	int		k, id;

	srand(7);
	for (k = 0; k < 200; k++) {
		w = (uint64_t)rand() << 33 ^ (uint64_t)rand() << 11 ^
		    (uint64_t)rand();
		if (k % 5 == 0)
			w = k % 2 ? 1ULL << 63 : 0;
		cpuset_zero(&a);
		cpuset_zero(&b);
		if (k % 3 == 0) {	/* above the word, kept */
			cr_assert_eq(cpuset_add(&a, 300 + k), 0);
			cr_assert_eq(cpuset_add(&b, 300 + k), 0);
		}
		cpuset_add_low(&a, w);
		for (id = 0; id < 64; id++)
			if (w >> id & 1)
				cr_assert_eq(cpuset_add(&b, id), 0);
		cr_assert(cpuset_equal(&a, &b), "word %llx",
		    (unsigned long long)w);
		cr_assert_eq(cpuset_count(&a), cpuset_count(&b));
	}
	/* Nothing added to a set that owns nothing: it still owns nothing. */
	cpuset_clear(&a);
	cpuset_add_low(&a, 0);
	cr_assert_eq(a.nwords, 0);
	cpuset_clear(&a);
	cpuset_clear(&b);
}

/* A set built id by id holds words up to a power of two; trimmed, only
 * up to its last id, the same set, and it grows again as before. */
Test(cpuset, trimmed_to_its_last_word)
{
	struct cpuset	a = CPUSET_INITIALIZER, b = CPUSET_INITIALIZER;

	cr_assert_eq(cpuset_add(&a, 0), 0);
	cr_assert_eq(cpuset_add(&a, 4096), 0);
	cr_assert_eq(a.nwords, 128);
	cpuset_copy(&b, &a);
	cpuset_trim(&a);
	cr_assert_eq(a.nwords, 65);
	cr_assert(cpuset_equal(&a, &b));
	testlib_assert_set(&a, "0,4096");
	cr_assert_eq(cpuset_add(&a, 8000), 0);
	testlib_assert_set(&a, "0,4096,8000");
	cpuset_trim(&a);
	cr_assert_eq(a.nwords, 126);
	/* Emptied, it owns nothing. */
	cpuset_zero(&a);
	cpuset_trim(&a);
	cr_assert_eq(a.nwords, 0);
	cr_assert_null(a.w);
	cr_assert(cpuset_empty(&a));
	cpuset_clear(&a);
	cpuset_clear(&b);
}

Test(cpuset, iteration_and_order)
{
	struct cpuset	*s = testlib_set("3,63,64,200,8191");
	struct cpuset	*t = testlib_set("3,64");
	int		 id, ids[8], n = 0;

	CPUSET_FOREACH(id, s)
		ids[n++] = id;
	cr_assert_eq(n, 5);
	cr_assert(ids[0] == 3 && ids[1] == 63 && ids[2] == 64 &&
	    ids[3] == 200 && ids[4] == 8191);
	cr_assert_eq(cpuset_count(s), 5);
	cr_assert_eq(cpuset_first(s), 3);
	cr_assert_eq(cpuset_last(s), 8191);
	cr_assert_eq(cpuset_next(s, 8191), -1);
	/* {3,63,...} holds 63 that {3,64} lacks, so it orders first. */
	cr_assert_lt(cpuset_cmp(s, t), 0);
	cr_assert_gt(cpuset_cmp(t, s), 0);
	cr_assert_eq(cpuset_cmp(s, s), 0);
	cpuset_free(s);
	cpuset_free(t);
	cpuset_free(NULL);
}

Test(cpuset, move_and_empty_sets)
{
	struct cpuset	 a = CPUSET_INITIALIZER, b = CPUSET_INITIALIZER;
	char		*out;

	cr_assert_eq(cpuset_first(&a), -1);
	cr_assert_eq(cpuset_last(&a), -1);
	cr_assert(cpuset_empty(&a));
	out = cpuset_format(&a);
	cr_assert_str_eq(out, "");
	free(out);
	cpuset_add(&a, 100);
	cpuset_move(&b, &a);
	cr_assert(cpuset_empty(&a));
	cr_assert(cpuset_has(&b, 100));
	cpuset_clear(&a);
	cpuset_clear(&b);
}

/*
 * Cleared sets give their words back for the next sets (cpuset.c keeps
 * them): a new set never shows what an old one held, whatever its size.
 */
Test(cpuset, cleared_words_come_back_empty)
{
	struct cpuset	 sets[300];
	int		 i, size, max[] = { 100, 447, 4095, CPUSET_MAX_ID };

	for (size = 0; size < 4; size++) {
		for (i = 0; i < 300; i++) {
			cpuset_init(&sets[i]);
			cr_assert_eq(cpuset_add_range(&sets[i], 0, max[size]),
			    0);
		}
		for (i = 0; i < 300; i++)
			cpuset_clear(&sets[i]);
		for (i = 0; i < 300; i++) {
			cr_assert_eq(cpuset_add(&sets[i], max[size]), 0);
			cr_assert_eq(cpuset_count(&sets[i]), 1, "size %d set %d",
			    max[size], i);
			cr_assert_eq(cpuset_first(&sets[i]), max[size]);
		}
		/* Moved over a set, the old words go back too. */
		for (i = 1; i < 300; i++)
			cpuset_move(&sets[0], &sets[i]);
		cr_assert_eq(cpuset_count(&sets[0]), 1);
		cpuset_clear(&sets[0]);
	}
}

/* The list form a bit at a time, as the reference for cpuset_format. */
static char *
format_slowly(const struct cpuset *s)
{
	char	*buf = calloc(1, 64 * 1024);
	size_t	 len = 0;
	int	 lo, hi;

	for (lo = 0; lo < CPUSET_SETSIZE; lo++) {
		if (!cpuset_has(s, lo))
			continue;
		for (hi = lo; hi + 1 < CPUSET_SETSIZE && cpuset_has(s, hi + 1);
		    hi++)
			;
		len += (size_t)snprintf(buf + len, 64 * 1024 - len,
		    hi > lo ? "%s%d-%d" : "%s%d", len ? "," : "", lo, hi);
		lo = hi;
	}
	return (buf);
}

/* cpuset_format_to gives want's length whatever the room, and want
 * whole when the room is more; tb_cpuset gives it as a JSON string. */
static void
assert_format_to(const struct cpuset *s, const char *want)
{
	size_t		 len = strlen(want), size;
	struct textbuf	 b;
	char		*buf = xmalloc(len + 2), *text;

	for (size = 0; size <= len + 1; size += size < 3 || size + 3 > len ?
	    1 : len / 5 + 1) {
		memset(buf, '#', len + 2);
		cr_assert_eq(cpuset_format_to(s, buf, size), len);
		if (size > len)
			cr_assert_str_eq(buf, want);
		else
			cr_assert_eq(buf[size], '#', "past the room given");
	}
	tb_init(&b, 8);
	tb_lit(&b, "[");
	tb_cpuset(&b, s);
	text = tb_finish(&b, NULL);
	cr_assert_eq(strlen(text), len + 3);
	cr_assert_eq(strncmp(text, "[\"", 2), 0);
	cr_assert_eq(strncmp(text + 2, want, len), 0);
	cr_assert_str_eq(text + 2 + len, "\"");
	free(text);
	free(buf);
}

/* Runs that start and end on and across word edges, lone ids, the first
 * and the last id, and sets grown past what they hold. */
Test(cpuset, format_is_the_list_a_bit_at_a_time)
{
	static const int	 edges[] = { 0, 1, 62, 63, 64, 65, 127, 128,
	    191, 4095, 4096, 8126, 8127, 8128, 8190, 8191 };
	struct cpuset		 s = CPUSET_INITIALIZER;
	unsigned long long	 r = 0x9e3779b97f4a7c15ULL;
	char			*got, *want;
	int			 i, k, lo, len;

	for (i = 0; i < 3000; i++) {
		cpuset_zero(&s);
		/* Words held past the last id set. */
		if (i % 7 == 0) {
			cpuset_add(&s, 8191);
			cpuset_del(&s, 8191);
		}
		for (k = (int)(r % 6); k >= 0; k--) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			lo = r % 3 == 0 ?
			    edges[r / 3 % (sizeof edges / sizeof edges[0])] :
			    (int)(r % CPUSET_SETSIZE);
			len = (int)(r / 7 % (r % 5 == 0 ? 300 : 4));
			for (; len >= 0 && lo < CPUSET_SETSIZE; len--, lo++)
				cpuset_add(&s, lo);
		}
		/* Many runs: longer than any buffer on the way. */
		if (i % 10 == 0)
			for (lo = (int)(r % 64); lo < 1000; lo += 2 + i % 3)
				cpuset_add(&s, lo);
		got = cpuset_format(&s);
		want = format_slowly(&s);
		cr_assert_str_eq(got, want, "set %d", i);
		assert_format_to(&s, want);
		free(got);
		free(want);
	}
	cpuset_clear(&s);
}
