/*
 * cpuset.c owns struct cpuset: a growable array of 64-bit words, the set
 * algebra over it and the kernel list text form. Words past nwords are
 * implicitly zero, so sets of different sizes combine freely.
 */
#include "autoconf.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "xmalloc.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define STASH_POISON(p, n)	ASAN_POISON_MEMORY_REGION((p), (n))
#define STASH_UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define STASH_POISON(p, n)	((void)(p), (void)(n))
#define STASH_UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define WORD_BITS	64
#define MAX_WORDS	(CPUSET_SETSIZE / WORD_BITS)

/*
 * Word arrays of cleared sets are kept by size (2, 4, ... MAX_WORDS
 * words, the sizes cpuset_grow makes) for the next new sets, up to
 * STASH_BYTES a size: a claim replaces the pinned sets of hundreds of
 * containers at once, more than malloc's own per-size cache holds, and
 * the frees that overflow it cost as much as the work. Single-threaded,
 * as the policy is. A kept array is poisoned for AddressSanitizer, so a
 * use after its set was cleared is still caught.
 */
#define STASH_SIZES	8		/* log2(MAX_WORDS) */
#define STASH_BYTES	(16 * 1024)
#define STASH_SLOTS	(STASH_BYTES / (2 * sizeof(uint64_t)))

static struct {
	int		 n;
	uint64_t	*v[STASH_SLOTS];
} stash[STASH_SIZES];

/* The stash of arrays of n words, or -1 for a size not kept. */
static int
stash_of(uint32_t n)
{
	int	k = 0;

	if (n < 2 || n > MAX_WORDS || (n & (n - 1)) != 0)
		return (-1);
	while ((2U << k) < n)
		k++;
	return (k < STASH_SIZES ? k : -1);
}

static uint64_t *
stash_take(uint32_t n)
{
	int		 k = stash_of(n);
	uint64_t	*w;

	if (k < 0 || stash[k].n == 0)
		return (NULL);
	w = stash[k].v[--stash[k].n];
	STASH_UNPOISON(w, n * sizeof *w);
	return (w);
}

/* Gives w (n words) back: kept, or freed. */
static void
stash_put(uint64_t *w, uint32_t n)
{
	int	k = stash_of(n);

	if (w == NULL)
		return;
	if (k < 0 || (size_t)stash[k].n >= STASH_BYTES / (n * sizeof *w)) {
		free(w);
		return;
	}
	STASH_POISON(w, n * sizeof *w);
	stash[k].v[stash[k].n++] = w;
}

void
cpuset_init(struct cpuset *s)
{
	s->nwords = 0;
	s->w = NULL;
}

void
cpuset_clear(struct cpuset *s)
{
	stash_put(s->w, s->nwords);
	cpuset_init(s);
}

struct cpuset *
cpuset_new(void)
{
	struct cpuset	*s;

	s = xmalloc(sizeof *s);
	cpuset_init(s);
	return (s);
}

void
cpuset_free(struct cpuset *s)
{
	if (s == NULL)
		return;
	cpuset_clear(s);
	free(s);
}

static void
cpuset_grow(struct cpuset *s, uint32_t nwords)
{
	uint32_t	n;

	if (nwords <= s->nwords)
		return;
	/* Round up to limit reallocations while a set is built id by id. */
	n = s->nwords ? s->nwords : 2;
	while (n < nwords)
		n *= 2;
	if (n > MAX_WORDS)
		n = MAX_WORDS;
	if (s->nwords == 0 && (s->w = stash_take(n)) != NULL)
		memset(s->w, 0, n * sizeof *s->w);
	else {
		s->w = xreallocarray(s->w, n, sizeof *s->w);
		memset(s->w + s->nwords, 0, (n - s->nwords) * sizeof *s->w);
	}
	s->nwords = n;
}

/* The words up to the last one with a bit set. */
static uint32_t
words_used(const struct cpuset *s)
{
	uint32_t	n = s->nwords;

	while (n > 0 && s->w[n - 1] == 0)
		n--;
	return (n);
}

void
cpuset_trim(struct cpuset *s)
{
	uint32_t	n = words_used(s);

	if (n == s->nwords)
		return;
	if (n == 0) {
		cpuset_clear(s);
		return;
	}
	s->w = xreallocarray(s->w, n, sizeof *s->w);
	s->nwords = n;
}

void
cpuset_zero(struct cpuset *s)
{
	if (s->nwords != 0)
		memset(s->w, 0, s->nwords * sizeof *s->w);
}

int
cpuset_add(struct cpuset *s, int id)
{
	if (id < 0 || id > CPUSET_MAX_ID)
		return (-ERANGE);
	cpuset_grow(s, (uint32_t)id / WORD_BITS + 1);
	s->w[id / WORD_BITS] |= 1ULL << (id % WORD_BITS);
	return (0);
}

int
cpuset_add_range(struct cpuset *s, int lo, int hi)
{
	int	id;

	if (lo < 0 || hi > CPUSET_MAX_ID || lo > hi)
		return (-ERANGE);
	cpuset_grow(s, (uint32_t)hi / WORD_BITS + 1);
	for (id = lo; id <= hi; id++)
		s->w[id / WORD_BITS] |= 1ULL << (id % WORD_BITS);
	return (0);
}

void
cpuset_add_low(struct cpuset *s, uint64_t bits)
{
	if (bits == 0)
		return;
	cpuset_grow(s, 1);
	s->w[0] |= bits;
}

void
cpuset_del(struct cpuset *s, int id)
{
	if (id < 0 || (uint32_t)id / WORD_BITS >= s->nwords)
		return;
	s->w[id / WORD_BITS] &= ~(1ULL << (id % WORD_BITS));
}

int
cpuset_has(const struct cpuset *s, int id)
{
	if (id < 0 || (uint32_t)id / WORD_BITS >= s->nwords)
		return (0);
	return ((s->w[id / WORD_BITS] >> (id % WORD_BITS)) & 1);
}

void
cpuset_copy(struct cpuset *dst, const struct cpuset *src)
{
	if (dst == src)
		return;
	cpuset_grow(dst, src->nwords);
	if (src->nwords != 0)
		memcpy(dst->w, src->w, src->nwords * sizeof *dst->w);
	if (dst->nwords > src->nwords)
		memset(dst->w + src->nwords, 0,
		    (dst->nwords - src->nwords) * sizeof *dst->w);
}

void
cpuset_move(struct cpuset *dst, struct cpuset *src)
{
	if (dst == src)
		return;
	stash_put(dst->w, dst->nwords);
	*dst = *src;
	cpuset_init(src);
}

void
cpuset_or(struct cpuset *dst, const struct cpuset *src)
{
	uint32_t	i, n;

	/* Grow only as far as src has bits, not to its allocation. */
	n = words_used(src);
	cpuset_grow(dst, n);
	for (i = 0; i < n; i++)
		dst->w[i] |= src->w[i];
}

void
cpuset_and(struct cpuset *dst, const struct cpuset *src)
{
	uint32_t	i;

	for (i = 0; i < dst->nwords; i++)
		dst->w[i] &= i < src->nwords ? src->w[i] : 0;
}

void
cpuset_andnot(struct cpuset *dst, const struct cpuset *src)
{
	uint32_t	i, n;

	n = dst->nwords < src->nwords ? dst->nwords : src->nwords;
	for (i = 0; i < n; i++)
		dst->w[i] &= ~src->w[i];
}

/*
 * Counting is most of what scoring does with sets (every pool, for every
 * container placed), and without -mpopcnt the compiler counts a word
 * through a libgcc call of some twenty instructions: on x86-64 the loader
 * picks a copy built for the CPU's own popcount instruction where it has
 * one. gcc's; clang 14 leaves the clones' entry point out (the fuzzing
 * build).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__POPCNT__)
#define COUNTING	__attribute__((target_clones("popcnt", "default")))
#else
#define COUNTING
#endif

COUNTING int
cpuset_count(const struct cpuset *s)
{
	uint32_t	i;
	int		n = 0;

	for (i = 0; i < s->nwords; i++)
		n += __builtin_popcountll(s->w[i]);
	return (n);
}

COUNTING int
cpuset_and_count(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	i, n;
	int		c = 0;

	n = a->nwords < b->nwords ? a->nwords : b->nwords;
	for (i = 0; i < n; i++)
		c += __builtin_popcountll(a->w[i] & b->w[i]);
	return (c);
}

int
cpuset_empty(const struct cpuset *s)
{
	uint32_t	i;

	for (i = 0; i < s->nwords; i++)
		if (s->w[i] != 0)
			return (0);
	return (1);
}

static uint64_t
word(const struct cpuset *s, uint32_t i)
{
	return (i < s->nwords ? s->w[i] : 0);
}

int
cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	i, n;

	/* Most sets compared were made alike, with as many words. */
	if (a->nwords == b->nwords)
		return (a->nwords == 0 ||
		    memcmp(a->w, b->w, a->nwords * sizeof *a->w) == 0);
	n = a->nwords > b->nwords ? a->nwords : b->nwords;
	for (i = 0; i < n; i++)
		if (word(a, i) != word(b, i))
			return (0);
	return (1);
}

/* FNV-1a over the words up to the last one set, each folded down: equal
 * sets hash alike, however many words each holds. */
uint64_t
cpuset_hash(const struct cpuset *s)
{
	uint64_t	h = 14695981039346656037ULL;
	uint32_t	i, n = words_used(s);

	for (i = 0; i < n; i++) {
		h ^= s->w[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return (h);
}

int
cpuset_subset(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	i;

	for (i = 0; i < a->nwords; i++)
		if (a->w[i] & ~word(b, i))
			return (0);
	return (1);
}

int
cpuset_intersects(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	i, n;

	n = a->nwords < b->nwords ? a->nwords : b->nwords;
	for (i = 0; i < n; i++)
		if (a->w[i] & b->w[i])
			return (1);
	return (0);
}

/* Orders sets by their lowest differing id: the set holding it comes first. */
int
cpuset_cmp(const struct cpuset *a, const struct cpuset *b)
{
	uint32_t	i, n;
	uint64_t	x, y, diff, low;

	n = a->nwords > b->nwords ? a->nwords : b->nwords;
	for (i = 0; i < n; i++) {
		x = word(a, i);
		y = word(b, i);
		if ((diff = x ^ y) == 0)
			continue;
		low = diff & -diff;
		return ((x & low) ? -1 : 1);
	}
	return (0);
}

/* The first id from id on whose bit is want (1: set, 0: clear); the
 * set's end (its words' bits) when there is none. */
static int
run_edge(const struct cpuset *s, int id, int want)
{
	uint32_t	i = (uint32_t)id / WORD_BITS;
	uint64_t	w;

	if (i >= s->nwords)
		return ((int)(s->nwords * WORD_BITS));
	w = (want ? s->w[i] : ~s->w[i]) & (~0ULL << (id % WORD_BITS));
	while (w == 0) {
		if (++i >= s->nwords)
			return ((int)(s->nwords * WORD_BITS));
		w = want ? s->w[i] : ~s->w[i];
	}
	return ((int)(i * WORD_BITS) + __builtin_ctzll(w));
}

int
cpuset_next(const struct cpuset *s, int prev)
{
	int	id = run_edge(s, prev + 1 < 0 ? 0 : prev + 1, 1);

	return (id < (int)(s->nwords * WORD_BITS) ? id : -1);
}

int
cpuset_first(const struct cpuset *s)
{
	return (cpuset_next(s, -1));
}

int
cpuset_last(const struct cpuset *s)
{
	uint32_t	i;

	for (i = s->nwords; i > 0; i--)
		if (s->w[i - 1] != 0)
			return ((int)((i - 1) * WORD_BITS) + 63 -
			    __builtin_clzll(s->w[i - 1]));
	return (-1);
}

/*
 * Reads a decimal id at *pp. Returns the id, -1 when there is no digit,
 * -2 when it is larger than CPUSET_MAX_ID.
 */
static int
parse_id(const char **pp)
{
	const char	*p = *pp;
	long		 v = 0;

	if (!isdigit((unsigned char)*p))
		return (-1);
	while (isdigit((unsigned char)*p)) {
		if (v <= CPUSET_MAX_ID)
			v = v * 10 + (*p - '0');
		p++;
	}
	*pp = p;
	return (v > CPUSET_MAX_ID ? -2 : (int)v);
}

int
cpuset_parse(struct cpuset *s, const char *text, char **cause)
{
	const char	*p, *tok, *end;
	int		 lo, hi;

	cpuset_zero(s);
	p = text;
	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (p == end)
		return (0);

	for (;;) {
		tok = p;
		hi = 0;
		if ((lo = parse_id(&p)) < 0)
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((hi = parse_id(&p)) < 0)
				goto bad;
			if (hi < lo) {
				if (cause != NULL)
					xasprintf(cause, "bad cpuset \"%s\": range "
					    "%d-%d is reversed", text, lo, hi);
				goto fail;
			}
		}
		cpuset_add_range(s, lo, hi);
		if (p == end)
			return (0);
		if (*p != ',')
			goto bad;
		p++;
	}

bad:
	if (cause != NULL) {
		size_t	len = strcspn(tok, ",");

		if (tok + len > end)
			len = (size_t)(end - tok);
		/* Say which kind of garbage it is: the ids are easy to fix. */
		if (lo == -2 || hi == -2)
			xasprintf(cause, "bad cpuset \"%s\": id in \"%.*s\" is "
			    "above %d", text, (int)len, tok, CPUSET_MAX_ID);
		else
			xasprintf(cause, "bad cpuset \"%s\": \"%.*s\" is not an "
			    "id or a range of ids", text, (int)len, tok);
	}
fail:
	cpuset_zero(s);
	return (-EINVAL);
}

/* v's decimal digits at p; how many. */
static size_t
put_id(char *p, int v)
{
	char	digits[12];
	size_t	n = 0, i;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	for (i = 0; i < n; i++)
		p[i] = digits[n - 1 - i];
	return (n);
}

/*
 * Runs found a word at a time and ids written by hand: the sets of a
 * Synchronize's updates and of the state are formatted for every
 * container, and a bit at a time with snprintf per run cost more than
 * the rest of a container's text.
 */
/* A run lo-hi (or lo), after a comma unless first, at p; its length.
 * RUN_MAX bytes at most: a comma, two ids and a dash. */
#define RUN_MAX		24

static size_t
put_run(char *p, int lo, int hi, int first)
{
	size_t	n = 0;

	if (!first)
		p[n++] = ',';
	n += put_id(p + n, lo);
	if (hi > lo) {
		p[n++] = '-';
		n += put_id(p + n, hi);
	}
	return (n);
}

char *
cpuset_format(const struct cpuset *s)
{
	char	*buf;
	size_t	 len = 0, size = 64;
	int	 lo, hi, end = (int)(s->nwords * WORD_BITS);

	buf = xmalloc(size);
	for (lo = run_edge(s, 0, 1); lo < end; lo = run_edge(s, hi + 2, 1)) {
		hi = run_edge(s, lo, 0) - 1;
		/* A run and the NUL fit in RUN_MAX bytes. */
		if (len + RUN_MAX > size) {
			size *= 2;
			buf = xreallocarray(buf, size, 1);
		}
		len += put_run(buf + len, lo, hi, len == 0);
	}
	buf[len] = '\0';
	return (buf);
}

size_t
cpuset_format_to(const struct cpuset *s, char *buf, size_t size)
{
	char	run[RUN_MAX];
	size_t	len = 0, n;
	int	lo, hi, end = (int)(s->nwords * WORD_BITS);

	for (lo = run_edge(s, 0, 1); lo < end; lo = run_edge(s, hi + 2, 1)) {
		hi = run_edge(s, lo, 0) - 1;
		n = put_run(run, lo, hi, len == 0);
		if (len + n < size)
			memcpy(buf + len, run, n);
		len += n;
	}
	if (len < size)
		buf[len] = '\0';
	return (len);
}
