/*
 * test_textbuf.c: the text buffer JSON is written with. Numbers as
 * printf writes them, strings as jansson reads them back.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "textbuf.h"
#include "utf8.h"
#include "xmalloc.h"

Test(textbuf, integers_as_printf_writes_them)
{
	static const long long	 v[] = { 0, 1, -1, 9, 10, -10, 1234567890,
	    LLONG_MAX, LLONG_MIN, LLONG_MIN + 1 };
	struct textbuf		 b;
	char			*got, want[32];
	size_t			 i, len;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		tb_init(&b, 1);		/* grows from the smallest */
		tb_int(&b, v[i]);
		got = tb_finish(&b, &len);
		snprintf(want, sizeof want, "%lld", v[i]);
		cr_assert_str_eq(got, want);
		cr_assert_eq(len, strlen(want));
		free(got);
	}
}

Test(textbuf, strings_read_back_as_written)
{
	static const char	*v[] = { "", "plain", "q\"uote", "back\\slash",
	    "\b\f\n\r\t\x01\x1f", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "/slash" };
	struct textbuf		 b;
	json_t			*doc;
	char			*text;
	size_t			 i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		tb_init(&b, 8);
		tb_lit(&b, "[");
		tb_str(&b, v[i]);
		tb_lit(&b, "]");
		text = tb_finish(&b, NULL);
		doc = json_loads(text, 0, NULL);
		cr_assert_not_null(doc, "not JSON: %s", text);
		cr_assert_str_eq(json_string_value(json_array_get(doc, 0)),
		    v[i]);
		json_decref(doc);
		free(text);
	}
	/* Bytes that are not UTF-8 become U+FFFD, the rest stays. */
	tb_init(&b, 8);
	tb_str(&b, "a\xff" "b\xc3\x28");
	text = tb_finish(&b, NULL);
	cr_assert_str_eq(text, "\"a\xef\xbf\xbd" "b\xef\xbf\xbd(\"");
	free(text);
}

/* A string taken as the buffer grows where it is, at both ends. */
Test(textbuf, an_adopted_string_grows_at_both_ends)
{
	struct textbuf	 b;
	char		*s, *out;
	size_t		 len, i;

	s = xstrdup("\"op\":1");
	tb_adopt(&b, s);
	cr_assert_eq(b.len, 6);
	tb_prepend(&b, "{\"e\":{", 6);
	/* Past the first doubling, and again at the front. */
	for (i = 0; i < 200; i++)
		tb_lit(&b, ",\"k\":2");
	tb_lit(&b, "}}");
	tb_prepend(&b, "[", 1);
	tb_lit(&b, "]");
	out = tb_finish(&b, &len);
	cr_assert_eq(len, 1 + 6 + 6 + 200 * 6 + 2 + 1);
	cr_assert_eq(strncmp(out, "[{\"e\":{\"op\":1,\"k\":2,\"k\":2", 25), 0,
	    "%.40s", out);
	cr_assert_str_eq(out + len - 9, ",\"k\":2}}]");
	free(out);
}

/*
 * The escaping and cleaning take eight bytes at a time where they can;
 * what they give must be what a byte at a time gives. The references
 * below are the byte loops, as jansson escapes and checks; a sequence
 * that is not ASCII is read by utf8_seqlen, as both paths read it.
 */
/* One character at p: its bytes (*n) and its width escaped. */
static size_t
ref_char(const unsigned char *p, size_t *n, char out[8])
{
	*n = 1;
	if (*p >= 0x80) {
		if ((*n = utf8_seqlen(p)) == 0) {
			*n = 1;
			memcpy(out, "\xef\xbf\xbd", 3);
			return (3);
		}
		memcpy(out, p, *n);
		return (*n);
	}
	switch (*p) {
	case '"': memcpy(out, "\\\"", 2); return (2);
	case '\\': memcpy(out, "\\\\", 2); return (2);
	case '\b': memcpy(out, "\\b", 2); return (2);
	case '\f': memcpy(out, "\\f", 2); return (2);
	case '\n': memcpy(out, "\\n", 2); return (2);
	case '\r': memcpy(out, "\\r", 2); return (2);
	case '\t': memcpy(out, "\\t", 2); return (2);
	}
	if (*p < 0x20) {
		snprintf(out, 8, "\\u%04X", *p);
		return (6);
	}
	out[0] = (char)*p;
	return (1);
}

static unsigned long long	rng = 88172645463325252ULL;

static unsigned
next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((unsigned)(rng % n));
}

/* A string of ASCII runs (long ones too) and every kind of byte the
 * escaping or the UTF-8 check treats apart, at any offset. */
static void
random_string(char *s, size_t size)
{
	static const char	*bits[] = { "a", "Z", " ", "~", "\x7f", "\"",
	    "\\", "\n", "\t", "\x01", "\x1f", "\xc3\xa9", "\xe2\x82\xac",
	    "\xf0\x9f\x98\x80", "\x80", "\xc0\xaf", "\xff", "\xed\xa0\x80",
	    "\xe2\x82", "\xf4\x90\x80\x80", "\xdf" };
	size_t			 len = 0, k, i;
	unsigned		 parts = next(12);

	s[0] = '\0';
	while (parts-- > 0) {
		if (next(3) == 0) {
			k = next(40);
			for (i = 0; i < k && len + 1 < size; i++)
				s[len++] = (char)('a' + (i % 26));
		} else {
			const char *b = bits[next(sizeof bits / sizeof bits[0])];

			if (len + strlen(b) + 1 >= size)
				break;
			memcpy(s + len, b, strlen(b));
			len += strlen(b);
		}
		s[len] = '\0';
	}
}

Test(textbuf, word_steps_give_what_byte_steps_give)
{
	char		 s[256], want[2048], c[8], *got;
	const unsigned char *p;
	struct textbuf	 b;
	size_t		 n, w, len, wlen, wbytes, max, gotbytes;
	int		 i, valid;

	for (i = 0; i < 20000; i++) {
		random_string(s, sizeof s);
		/* The whole string escaped, and whether it is UTF-8. */
		wlen = 0;
		valid = 1;
		for (p = (const unsigned char *)s; *p != '\0'; p += n) {
			w = ref_char(p, &n, c);
			memcpy(want + wlen, c, w);
			wlen += w;
			if (*p >= 0x80 && utf8_seqlen(p) == 0)
				valid = 0;
		}
		want[wlen] = '\0';
		tb_init(&b, 1);
		tb_esc(&b, s);
		got = tb_finish(&b, &len);
		cr_assert_eq(len, wlen, "string %d", i);
		cr_assert(memcmp(got, want, wlen) == 0, "string %d: %s", i,
		    got);
		free(got);
		cr_assert_eq(utf8_valid(s), valid, "string %d", i);
		got = utf8_clean(s);
		cr_assert_eq(utf8_valid(got), 1, "string %d", i);
		if (valid)
			cr_assert_str_eq(got, s);
		free(got);
		/* Its width up to a bound, in whole characters. */
		max = next(4) == 0 ? SIZE_MAX : next(80);
		wlen = wbytes = 0;
		for (p = (const unsigned char *)s; *p != '\0'; p += n) {
			w = ref_char(p, &n, c);
			if (wlen + w > max)
				break;
			wlen += w;
			wbytes += n;
		}
		cr_assert_eq(tb_esc_len(s, max, &gotbytes), wlen,
		    "string %d, max %zu", i, max);
		cr_assert_eq(gotbytes, wbytes, "string %d, max %zu", i, max);
	}
}
