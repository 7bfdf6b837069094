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
