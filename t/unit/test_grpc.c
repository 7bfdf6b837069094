/*
 * test_grpc.c: the gRPC message layer against protocols.md 5.2-5.3: the
 * 5-byte prefix (flag, big-endian length), a request split anywhere, the
 * size cap, the compressed flag refused, grpc-message percent-encoding
 * and grpc-timeout units.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "xmalloc.h"

/* Frames msg by hand, as protocols.md 5.2 lays it out. */
static uint8_t *
frame(const char *msg, size_t len, uint8_t flag)
{
	uint8_t	*b = xmalloc(len + 5);

	b[0] = flag;
	b[1] = (uint8_t)(len >> 24);
	b[2] = (uint8_t)(len >> 16);
	b[3] = (uint8_t)(len >> 8);
	b[4] = (uint8_t)len;
	memcpy(b + 5, msg, len);
	return (b);
}

Test(grpc, prefix_layout)
{
	uint8_t	p[GRPC_PREFIX_SIZE];

	grpc_prefix(p, 0);
	cr_assert_eq(memcmp(p, "\0\0\0\0\0", 5), 0);
	grpc_prefix(p, 0x01020304);
	cr_assert_eq(p[0], 0);
	cr_assert_eq(p[1], 1);
	cr_assert_eq(p[2], 2);
	cr_assert_eq(p[3], 3);
	cr_assert_eq(p[4], 4);
}

Test(grpc, whole_message)
{
	struct grpc_reader	 r;
	const uint8_t		*msg;
	size_t			 len;
	uint8_t			*b = frame("hello", 5, 0);

	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, b, 10, NULL), 0);
	cr_assert_eq(grpc_reader_finish(&r, &msg, &len, NULL), 0);
	cr_assert_eq(len, 5);
	cr_assert_eq(memcmp(msg, "hello", 5), 0);
	grpc_reader_clear(&r);
	free(b);
}

Test(grpc, empty_message_is_five_bytes)
{
	struct grpc_reader	 r;
	const uint8_t		*msg;
	size_t			 len = 99;

	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, "\0\0\0\0\0", 5, NULL), 0);
	cr_assert_eq(grpc_reader_finish(&r, &msg, &len, NULL), 0);
	cr_assert_eq(len, 0);
	grpc_reader_clear(&r);
}

Test(grpc, split_at_every_byte)
{
	const char		*text = "a message split over many DATA frames";
	size_t			 n = strlen(text), i, cut;
	uint8_t			*b = frame(text, n, 0);
	struct grpc_reader	 r;
	const uint8_t		*msg;
	size_t			 len;

	for (cut = 0; cut <= n + 5; cut++) {
		grpc_reader_init(&r, GRPC_MAX_REQUEST);
		cr_assert_eq(grpc_reader_feed(&r, b, cut, NULL), 0);
		if (cut < n + 5)
			cr_assert_eq(grpc_reader_finish(&r, &msg, &len, NULL),
			    -EPROTO, "finished early at cut %zu", cut);
		grpc_reader_clear(&r);
	}
	/* One byte at a time, then the empty DATA that carries END_STREAM. */
	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	for (i = 0; i < n + 5; i++)
		cr_assert_eq(grpc_reader_feed(&r, b + i, 1, NULL), 0);
	cr_assert_eq(grpc_reader_feed(&r, "", 0, NULL), 0);
	cr_assert_eq(grpc_reader_finish(&r, &msg, &len, NULL), 0);
	cr_assert_eq(len, n);
	cr_assert_eq(memcmp(msg, text, n), 0);
	grpc_reader_clear(&r);
	free(b);
}

Test(grpc, no_message_at_all)
{
	struct grpc_reader	 r;
	const uint8_t		*msg;
	size_t			 len;
	char			*cause = NULL;

	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_finish(&r, &msg, &len, &cause), -EPROTO);
	cr_assert_not_null(cause);
	cr_assert_eq(grpc_status_for_error(-EPROTO), GRPC_STATUS_INTERNAL);
	free(cause);
	grpc_reader_clear(&r);
}

Test(grpc, cap_refused_from_the_prefix)
{
	struct grpc_reader	 r;
	uint8_t			 p[5];
	char			*cause = NULL;

	/* The prefix alone announces 4 MiB + 1: refused before any body. */
	grpc_prefix(p, (4U << 20) + 1);
	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, p, 5, &cause), -EMSGSIZE);
	cr_assert_not_null(cause);
	free(cause);
	cr_assert_eq(grpc_status_for_error(-EMSGSIZE),
	    GRPC_STATUS_RESOURCE_EXHAUSTED);
	cr_assert_eq(GRPC_STATUS_RESOURCE_EXHAUSTED, 8);
	/* Once failed, it stays failed. */
	cr_assert_eq(grpc_reader_feed(&r, "x", 1, NULL), -EMSGSIZE);
	grpc_reader_clear(&r);

	/* Exactly at the cap is fine (checked with a small cap). */
	grpc_prefix(p, 16);
	grpc_reader_init(&r, 16);
	cr_assert_eq(grpc_reader_feed(&r, p, 5, NULL), 0);
	grpc_reader_clear(&r);
	grpc_prefix(p, 17);
	grpc_reader_init(&r, 16);
	cr_assert_eq(grpc_reader_feed(&r, p, 5, NULL), -EMSGSIZE);
	grpc_reader_clear(&r);
}

Test(grpc, compressed_flag_refused)
{
	struct grpc_reader	 r;
	uint8_t			*b = frame("zz", 2, 1);

	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, b, 7, NULL), -ENOTSUP);
	cr_assert_eq(grpc_status_for_error(-ENOTSUP),
	    GRPC_STATUS_UNIMPLEMENTED);
	grpc_reader_clear(&r);
	free(b);

	b = frame("zz", 2, 2);
	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, b, 7, NULL), -EPROTO);
	grpc_reader_clear(&r);
	free(b);
}

Test(grpc, second_message_refused)
{
	struct grpc_reader	 r;
	uint8_t			*b = frame("ab", 2, 0);

	grpc_reader_init(&r, GRPC_MAX_REQUEST);
	cr_assert_eq(grpc_reader_feed(&r, b, 7, NULL), 0);
	cr_assert_eq(grpc_reader_feed(&r, b, 1, NULL), -EPROTO);
	grpc_reader_clear(&r);
	free(b);
}

Test(grpc, percent_encoding)
{
	char	*e, *d;

	e = grpc_pct_encode("plain text ~", 0);
	cr_assert_str_eq(e, "plain text ~");
	free(e);
	/* '%' itself, a newline, DEL and the UTF-8 bytes of U+2717. */
	e = grpc_pct_encode("100% \n\x7f\xe2\x9c\x97", 0);
	cr_assert_str_eq(e, "100%25 %0A%7F%E2%9C%97");
	d = grpc_pct_decode(e);
	cr_assert_str_eq(d, "100% \n\x7f\xe2\x9c\x97");
	free(d);
	free(e);
	/* Receivers pass malformed escapes through. */
	d = grpc_pct_decode("50%zz and %4");
	cr_assert_str_eq(d, "50%zz and %4");
	free(d);
}

Test(grpc, percent_round_trip_all_bytes)
{
	char	 in[256], *e, *d;
	int	 i;

	for (i = 1; i < 256; i++)
		in[i - 1] = (char)i;
	in[255] = '\0';
	e = grpc_pct_encode(in, 0);
	for (i = 0; e[i] != '\0'; i++)
		cr_assert(e[i] >= 0x20 && e[i] <= 0x7e);
	d = grpc_pct_decode(e);
	cr_assert_str_eq(d, in);
	free(d);
	free(e);
}

Test(grpc, percent_truncation_keeps_escapes_whole)
{
	char	*e;

	e = grpc_pct_encode("ab\ncd", 4);
	/* "ab%0A" would be 5 bytes: the escape is dropped whole. */
	cr_assert_str_eq(e, "ab");
	free(e);
	e = grpc_pct_encode("ab\ncd", 5);
	cr_assert_str_eq(e, "ab%0A");
	free(e);
}

Test(grpc, timeout_units)
{
	int64_t	us;

	cr_assert_eq(grpc_timeout_parse("5010m", &us), 0);
	cr_assert_eq(us, 5010000);
	/* A 45 s kubelet deadline, as protocols.md 5.2 shows it. */
	cr_assert_eq(grpc_timeout_parse("44999990u", &us), 0);
	cr_assert_eq(us, 44999990);
	cr_assert_eq(grpc_timeout_parse("123456789u", &us), -EINVAL,
	    "nine digits are more than the protocol's eight");
	cr_assert_eq(grpc_timeout_parse("44999990n", &us), 0);
	cr_assert_eq(us, 44999);
	cr_assert_eq(grpc_timeout_parse("1H", &us), 0);
	cr_assert_eq(us, 3600000000LL);
	cr_assert_eq(grpc_timeout_parse("2M", &us), 0);
	cr_assert_eq(us, 120000000LL);
	cr_assert_eq(grpc_timeout_parse("45S", &us), 0);
	cr_assert_eq(us, 45000000LL);
	cr_assert_eq(grpc_timeout_parse("S", &us), -EINVAL);
	cr_assert_eq(grpc_timeout_parse("10", &us), -EINVAL);
	cr_assert_eq(grpc_timeout_parse("10x", &us), -EINVAL);
	cr_assert_eq(grpc_timeout_parse("10mm", &us), -EINVAL);
}

Test(grpc, status_names)
{
	cr_assert_str_eq(grpc_status_name(0), "OK");
	cr_assert_str_eq(grpc_status_name(12), "UNIMPLEMENTED");
	cr_assert_str_eq(grpc_status_name(14), "UNAVAILABLE");
	cr_assert_str_eq(grpc_status_name(99), "UNKNOWN");
}
