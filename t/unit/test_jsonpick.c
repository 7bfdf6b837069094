/*
 * test_jsonpick.c: one string picked out of a JSON text (jsonpick.c). The
 * string is the one jansson finds, unescaped alike; a text jansson refuses
 * is refused, but for the two things jsonpick leaves unchecked (keys met
 * twice off the path, numbers beyond jansson's range); a text jansson
 * reads is read.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpick.h"
#include "xmalloc.h"

static const char *const rv_path[] = { "metadata", "resourceVersion", NULL };

static char *
pick(const char *text, int *rc)
{
	char	*out = NULL, *cause = NULL;

	*rc = jsonpick(text, strlen(text), rv_path, &out, &cause);
	if (*rc != 0) {
		cr_assert_not_null(cause, "no cause for a refusal of %s", text);
		cr_assert_null(out);
		free(cause);
	} else
		cr_assert_null(cause);
	return (out);
}

/* What jansson, as the API client reads answers, makes of text. */
static int
jansson_pick(const char *text, char **out, char *why, size_t whylen)
{
	json_error_t	 err;
	json_t		*j;
	const char	*s;

	*out = NULL;
	j = json_loadb(text, strlen(text), JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES, &err);
	if (j == NULL) {
		snprintf(why, whylen, "%s", err.text);
		return (-1);
	}
	s = json_string_value(json_object_get(json_object_get(j, "metadata"),
	    "resourceVersion"));
	if (s != NULL)
		*out = xstrdup(s);
	json_decref(j);
	return (0);
}

static const char *const agree[] = {
	/* Read, with the string found or not. */
	"{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"42\"}}",
	" {\"kind\" : \"X\", \"metadata\" : { \"resourceVersion\" : \"7\" } }\n",
	"{\"metadata\":{\"resourceVersion\":42}}",
	"{\"metadata\":{\"resourceVersion\":null}}",
	"{\"metadata\":{\"resourceVersion\":{\"a\":\"b\"}}}",
	"{\"metadata\":\"resourceVersion\"}",
	"{\"metadata\":[{\"resourceVersion\":\"1\"}]}",
	"{\"spec\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
	"{\"resourceVersion\":\"1\"}",
	"{}",
	"[]",
	"\"metadata\"",
	"-0.5e+10",
	"0",
	"true",
	"null",
	"[1, -2, 3.25, 4e5, 6E-7, true, false, null, \"\", {}, []]",
	/* Escapes: in the value, and in the keys on the path. */
	"{\"metadata\":{\"resourceVersion\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"}}",
	"{\"metadata\":{\"resourceVersion\":\"\\u00e9\\u20ac\\ud83d\\ude00\"}}",
	"{\"meta\\u0064ata\":{\"resource\\u0056ersion\":\"9\"}}",
	"{\"metadata\":{\"resourceVersion\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}}",
	/* Refused. */
	"",
	"   ",
	"{",
	"{\"metadata\":{\"resourceVersion\":\"1\"}",
	"{\"metadata\":{\"resourceVersion\":\"1\"}}}",
	"{\"metadata\":{\"resourceVersion\":\"1\"}} x",
	"{\"metadata\" {}}",
	"{\"metadata\":{},}",
	"[1,]",
	"[1 2]",
	"{metadata:{}}",
	"{'metadata':{}}",
	"01",
	"-",
	"1.",
	".5",
	"1e",
	"+1",
	"tru",
	"nulls",
	"NaN",
	"\"\\x\"",
	"\"\\u12\"",
	"\"\\u0000\"",
	"\"\\ud800\"",
	"\"\\udc00\"",
	"\"\\ud800\\u0041\"",
	"\"a\tb\"",
	"\"\xc0\xaf\"",
	"\"\xe0\x80\xaf\"",
	"\"\xf0\x80\x80\xaf\"",
	"\"\xed\xa0\x80\"",
	"\"\xf4\x90\x80\x80\"",
	"\"\xe2\x82\"",
	"\"\x80\"",
	"\"unterminated",
	"\xef\xbb\xbf{}",
	/* Keys on the path met twice. */
	"{\"metadata\":{},\"metadata\":{}}",
	"{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVersion\":\"2\"}}",
	"{\"metadata\":{\"resourceVersion\":\"1\",\"resourceVers\\u0069on\":\"2\"}}",
};

Test(jsonpick, agrees_with_jansson)
{
	char	*got, *want, why[200];
	size_t	 i;
	int	 rc, jrc;

	for (i = 0; i < sizeof agree / sizeof agree[0]; i++) {
		got = pick(agree[i], &rc);
		jrc = jansson_pick(agree[i], &want, why, sizeof why);
		cr_assert_eq(rc, jrc, "%s: jsonpick %d, jansson %d (%s)",
		    agree[i], rc, jrc, jrc != 0 ? why : "");
		if (want == NULL)
			cr_assert_null(got, "%s: picked %s", agree[i], got);
		else {
			cr_assert_not_null(got, "%s: nothing picked", agree[i]);
			cr_assert_str_eq(got, want, "%s", agree[i]);
		}
		free(got);
		free(want);
	}
}

/* The strings themselves, not only jansson's word for them. */
Test(jsonpick, unescapes_as_written)
{
	char	*got;
	int	 rc;

	got = pick("{\"metadata\":{\"resourceVersion\":\"12345\"}}", &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(got, "12345");
	free(got);
	got = pick("{\"metadata\":{\"resourceVersion\":\"a\\\"\\u00e9"
	    "\\ud83d\\ude00\\n\"}}", &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(got, "a\"\xc3\xa9\xf0\x9f\x98\x80\n");
	free(got);
	got = pick("{\"metadata\":{\"resourceVersion\":\"\"}}", &rc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(got, "");
	free(got);
	/* A path of no keys picks the whole text, if a string. */
	{
		static const char *const top[] = { NULL };
		char	*cause = NULL;

		cr_assert_eq(jsonpick("\"x\\ty\"", 6, top, &got, &cause), 0);
		cr_assert_str_eq(got, "x\ty");
		free(got);
	}
}

/* What jsonpick does not check, by design: keys off the path met twice,
 * numbers too large for jansson's types. */
Test(jsonpick, leaves_off_the_path_alone)
{
	static const char *const texts[] = {
		"{\"metadata\":{\"resourceVersion\":\"3\"},\"a\":1,\"a\":2}",
		"{\"metadata\":{\"resourceVersion\":\"3\",\"x\":[1e999,"
		    "123456789012345678901234567890]}}",
	};
	char	*got, *want, why[200];
	size_t	 i;
	int	 rc;

	for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		cr_assert_neq(jansson_pick(texts[i], &want, why, sizeof why),
		    0, "%s", texts[i]);
		got = pick(texts[i], &rc);
		cr_assert_eq(rc, 0, "%s", texts[i]);
		cr_assert_str_eq(got, "3");
		free(got);
	}
}

/* Nesting as deep as jansson reads, and no deeper. */
Test(jsonpick, depth_limit_is_janssons)
{
	char	*text, *got, *want, why[200];
	int	 depth, rc, jrc;

	for (depth = JSONPICK_MAX_DEPTH - 1; depth <= JSONPICK_MAX_DEPTH + 1;
	    depth++) {
		text = xmalloc(2 * (size_t)depth + 1);
		memset(text, '[', (size_t)depth);
		memset(text + depth, ']', (size_t)depth);
		text[2 * depth] = '\0';
		got = pick(text, &rc);
		jrc = jansson_pick(text, &want, why, sizeof why);
		cr_assert_eq(rc, depth <= JSONPICK_MAX_DEPTH ? 0 : -1,
		    "depth %d", depth);
		cr_assert_eq(rc, jrc, "depth %d: jansson %d", depth, jrc);
		free(got);
		free(want);
		free(text);
	}
}

/* The cause says where: the byte of the first fault. */
Test(jsonpick, cause_names_the_byte)
{
	char	*out = NULL, *cause = NULL;

	cr_assert_eq(jsonpick("[1, 2, x]", 9, rv_path, &out, &cause), -1);
	cr_assert_str_eq(cause, "unexpected byte at byte 7");
	free(cause);
	cause = NULL;
	cr_assert_eq(jsonpick("{\"metadata\":1,\"metadata\":2}", 27, rv_path,
	    &out, &cause), -1);
	cr_assert_str_eq(cause, "a key on the path given twice at byte 14");
	free(cause);
	/* A NUL byte is no end of the text (jansson takes one after a
	 * value for its end). */
	cause = NULL;
	cr_assert_eq(jsonpick("false\0", 6, rv_path, &out, &cause), -1);
	cr_assert_str_eq(cause, "more after the value at byte 5");
	free(cause);
	/* Only len bytes are read: what follows is not the text's. */
	cause = NULL;
	cr_assert_eq(jsonpick("[1]]", 3, rv_path, &out, &cause), 0);
	cr_assert_null(cause);
}
