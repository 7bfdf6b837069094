/*
 * test_jrec.c: the journal's record framing (jrec.c): CRC-32C against its
 * published check value, records read back in order, and a bad record told
 * apart as the torn tail of an append or as damage with good records after
 * it; NUL room after the last record is neither.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "jrec.h"
#include "xmalloc.h"

Test(jrec, crc32c_check_value)
{
	/* The CRC-32C of "123456789" is 0xe3069283 (RFC 3720, B.4). */
	cr_assert_eq(jrec_crc32c(0, "123456789", 9), 0xe3069283U);
	/* In pieces, the same. */
	cr_assert_eq(jrec_crc32c(jrec_crc32c(0, "1234", 4), "56789", 5),
	    0xe3069283U);
	cr_assert_eq(jrec_crc32c(0, "", 0), 0);
}

/* Longer inputs, eight bytes at a time and the rest: RFC 3720, B.4. */
Test(jrec, crc32c_rfc3720_vectors)
{
	unsigned char	buf[32], big[1000];
	uint32_t	whole, c, r;
	size_t		i, k, cut;

	memset(buf, 0, sizeof buf);
	cr_assert_eq(jrec_crc32c(0, buf, 32), 0x8a9136aaU);
	memset(buf, 0xff, sizeof buf);
	cr_assert_eq(jrec_crc32c(0, buf, 32), 0x62a8ab43U);
	for (i = 0; i < 32; i++)
		buf[i] = (unsigned char)i;
	cr_assert_eq(jrec_crc32c(0, buf, 32), 0x46dd794eU);
	for (i = 0; i < 32; i++)
		buf[i] = (unsigned char)(31 - i);
	cr_assert_eq(jrec_crc32c(0, buf, 32), 0x113fdb5cU);
	/* Against the bit-by-bit definition, cut anywhere. */
	for (i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 131 + 7);
	r = ~0U;
	for (i = 0; i < sizeof big; i++) {
		r ^= big[i];
		for (k = 0; k < 8; k++)
			r = r & 1 ? (r >> 1) ^ 0x82f63b78U : r >> 1;
	}
	whole = ~r;
	for (cut = 0; cut <= 17; cut++) {
		c = jrec_crc32c(jrec_crc32c(0, big, cut), big + cut,
		    sizeof big - cut);
		cr_assert_eq(c, whole, "cut at %zu", cut);
	}
}

/* The instruction's path and the tables' agree at every length and
 * alignment, continued from any CRC: the two paths must be one function. */
Test(jrec, crc32c_paths_agree)
{
	unsigned char	buf[600];
	uint32_t	seed, a, b;
	size_t		off, len;

	for (off = 0; off < sizeof buf; off++)
		buf[off] = (unsigned char)(off * 197 + (off >> 3) * 61 + 11);
	seed = 0;
	for (off = 0; off < 16; off++)
		for (len = 0; len + off <= sizeof buf; len += 1 + len / 8) {
			a = jrec_crc32c(seed, buf + off, len);
			b = jrec_crc32c_slice8(seed, buf + off, len);
			cr_assert_eq(a, b, "offset %zu length %zu: %08x, %08x",
			    off, len, a, b);
			seed = a;
		}
	cr_assert_eq(jrec_crc32c_slice8(0, "123456789", 9), 0xe3069283U);
}

struct seen {
	int		 n;
	uint64_t	 seq[8];
	char		*payload[8];
};

static int
collect(uint64_t seq, const char *p, size_t len, void *arg)
{
	struct seen	*s = arg;

	cr_assert_lt(s->n, 8);
	s->seq[s->n] = seq;
	s->payload[s->n] = xstrndup(p, len);
	s->n++;
	return (0);
}

static void
seen_clear(struct seen *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->payload[i]);
	memset(s, 0, sizeof *s);
}

/* Three records, one after the other. */
static char *
three(size_t *len, size_t *ends)
{
	const char	*p[] = { "{\"a\":1}", "", "{\"b\":\"x\\ny\"}" };
	char		*buf = NULL, *r;
	size_t		 n, total = 0;
	int		 i;

	for (i = 0; i < 3; i++) {
		r = jrec_encode((uint64_t)(41 + i), p[i], strlen(p[i]), &n);
		buf = xreallocarray(buf, total + n + 1, 1);
		memcpy(buf + total, r, n);
		total += n;
		ends[i] = total;
		free(r);
	}
	*len = total;
	return (buf);
}

Test(jrec, records_read_back_in_order)
{
	struct seen	 s = { 0 };
	size_t		 len, good, ends[3];
	char		*buf = three(&len, ends), *cause = NULL;

	cr_assert_eq(jrec_scan(buf, len, collect, &s, &good, &cause),
	    JREC_END);
	cr_assert_null(cause);
	cr_assert_eq(good, len);
	cr_assert_eq(s.n, 3);
	cr_assert_eq(s.seq[0], 41);
	cr_assert_eq(s.seq[2], 43);
	cr_assert_str_eq(s.payload[0], "{\"a\":1}");
	cr_assert_str_eq(s.payload[1], "");
	cr_assert_str_eq(s.payload[2], "{\"b\":\"x\\ny\"}");
	/* The header says what it holds. */
	cr_assert_eq(strncmp(buf, "J 41 7 ", 7), 0);
	seen_clear(&s);
	free(buf);
}

Test(jrec, a_cut_anywhere_is_a_torn_tail)
{
	struct seen	 s = { 0 };
	size_t		 len, good, ends[3], cut;
	char		*buf = three(&len, ends), *cause = NULL;
	int		 rc;

	for (cut = 0; cut < len; cut++) {
		rc = jrec_scan(buf, cut, collect, &s, &good, &cause);
		if (cut == ends[0] || cut == ends[1] || cut == 0) {
			cr_assert_eq(rc, JREC_END, "cut at %zu", cut);
			cr_assert_eq(good, cut);
		} else {
			cr_assert_eq(rc, JREC_TORN, "cut at %zu: %d", cut, rc);
			cr_assert_eq(good, cut < ends[0] ? 0 : cut < ends[1] ?
			    ends[0] : ends[1], "cut at %zu", cut);
			cr_assert_not_null(strstr(cause, "the last one"));
		}
		free(cause);
		cause = NULL;
		seen_clear(&s);
	}
	free(buf);
}

Test(jrec, a_bad_record_before_good_ones_is_damage)
{
	struct seen	 s = { 0 };
	size_t		 len, good, ends[3];
	char		*buf = three(&len, ends), *cause = NULL;

	/* One byte of the second payload changes: its checksum fails. */
	buf[ends[0] + 9] ^= 0x20;
	cr_assert_eq(jrec_scan(buf, len, collect, &s, &good, &cause),
	    JREC_DAMAGED);
	cr_assert_eq(good, ends[0]);
	cr_assert_eq(s.n, 1);
	cr_assert_not_null(strstr(cause, "byte"), "%s", cause);
	free(cause);
	cause = NULL;
	seen_clear(&s);
	/* The same record last: a torn tail. */
	cr_assert_eq(jrec_scan(buf, ends[1], collect, &s, &good, &cause),
	    JREC_TORN);
	free(cause);
	seen_clear(&s);
	free(buf);
}

Test(jrec, garbage_and_zeros)
{
	size_t		 good;
	char		*cause = NULL;
	char		 zeros[64];
	static const char junk[] = "J 1 5 zzzzzzzz\nhello\n";
	static const char huge[] = "J 1 99999999999 00000000\n";

	memset(zeros, 0, sizeof zeros);
	/* Zeros alone: room for records, none written yet. */
	cr_assert_eq(jrec_scan(zeros, sizeof zeros, NULL, NULL, &good, &cause),
	    JREC_END);
	cr_assert_eq(good, 0);
	cr_assert_null(cause);
	cr_assert_eq(jrec_scan(junk, strlen(junk), NULL, NULL, &good, &cause),
	    JREC_TORN);
	cr_assert_not_null(strstr(cause, "checksum"), "%s", cause);
	free(cause);
	cr_assert_eq(jrec_scan(huge, strlen(huge), NULL, NULL, &good, &cause),
	    JREC_TORN);
	cr_assert_not_null(strstr(cause, "longer than the limit"), "%s",
	    cause);
	free(cause);
}

static int
stop_at_two(uint64_t seq, const char *p, size_t len, void *arg)
{
	(void)p;
	(void)len;
	(void)arg;
	return (seq == 42 ? 7 : 0);
}

Test(jrec, a_callback_stops_the_scan)
{
	size_t	 len, good, ends[3];
	char	*buf = three(&len, ends), *cause = NULL;

	cr_assert_eq(jrec_scan(buf, len, stop_at_two, NULL, &good, &cause), 7);
	cr_assert_eq(good, ends[0]);
	free(buf);
}

/* The writer's NUL room after the records (journal.c) ends them; a record
 * torn in the room is still torn, and records after room are damage. */
Test(jrec, room_after_the_records)
{
	struct seen	 s = { 0 };
	size_t		 len, good, ends[3], cut;
	char		*buf = three(&len, ends), *cause = NULL, *room;
	const size_t	 extra = 4096;

	room = xcalloc(1, len + extra + len);
	memcpy(room, buf, len);
	cr_assert_eq(jrec_scan(room, len + extra, collect, &s, &good, &cause),
	    JREC_END);
	cr_assert_eq(good, len);
	cr_assert_eq(s.n, 3);
	cr_assert_null(cause);
	seen_clear(&s);
	/* One NUL byte is room too. */
	cr_assert_eq(jrec_scan(room, len + 1, collect, &s, &good, &cause),
	    JREC_END);
	cr_assert_eq(good, len);
	seen_clear(&s);
	/* The last record cut anywhere, its room NUL: torn. */
	for (cut = ends[1] + 1; cut < len; cut++) {
		memset(room, 0, len + extra);
		memcpy(room, buf, cut);
		cr_assert_eq(jrec_scan(room, len + extra, collect, &s, &good,
		    &cause), JREC_TORN, "cut at %zu", cut);
		cr_assert_eq(good, ends[1], "cut at %zu", cut);
		free(cause);
		cause = NULL;
		seen_clear(&s);
	}
	/* A byte in the room that is not NUL: not room. */
	memset(room, 0, len + extra);
	memcpy(room, buf, len);
	room[len + 100] = 'x';
	cr_assert_eq(jrec_scan(room, len + extra, collect, &s, &good, &cause),
	    JREC_TORN);
	cr_assert_eq(good, len);
	free(cause);
	cause = NULL;
	seen_clear(&s);
	/* Good records after room: damage, read up to the room. */
	memset(room, 0, len + extra + len);
	memcpy(room, buf, ends[0]);
	memcpy(room + ends[0] + extra, buf + ends[0], len - ends[0]);
	cr_assert_eq(jrec_scan(room, ends[0] + extra + len - ends[0], collect,
	    &s, &good, &cause), JREC_DAMAGED);
	cr_assert_eq(good, ends[0]);
	cr_assert_eq(s.n, 1);
	free(cause);
	seen_clear(&s);
	free(room);
	free(buf);
}
