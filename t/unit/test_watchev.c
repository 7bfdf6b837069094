/*
 * test_watchev.c: the watch stream decoder (watchev.c): the same events
 * whatever the pieces, several events in one piece, whitespace between
 * them, the size limit, each malformed event named, and an ERROR event's
 * Status (410 Gone) exposed.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "watchev.h"
#include "xmalloc.h"

struct seen {
	int	 n;
	int	 type[16];
	char	*rv[16];
	int	 stop_at;
};

static int
collect(void *arg, enum watchev_type t, json_t *obj)
{
	struct seen	*s = arg;
	json_t		*rv;

	cr_assert_lt(s->n, 16);
	rv = json_object_get(json_object_get(obj, "metadata"),
	    "resourceVersion");
	s->type[s->n] = (int)t;
	s->rv[s->n] = xstrdup(json_string_value(rv));
	s->n++;
	return (s->stop_at != 0 && s->n == s->stop_at);
}

static void
seen_clear(struct seen *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->rv[i]);
	memset(s, 0, sizeof *s);
}

#define STREAM \
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"," \
	"\"resourceVersion\":\"11\",\"annotations\":{\"x\":\"}{\\\"]\\\\\"}}}}\n" \
	"{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\"," \
	"\"resourceVersion\":\"12\"},\"spec\":[{\"a\":[1,2,{}]}]}}\r\n" \
	"  {\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Node\"," \
	"\"metadata\":{\"resourceVersion\":\"15\"}}}" \
	"{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"a\"," \
	"\"resourceVersion\":\"16\"}}}\n"

static void
check_stream(const struct seen *s)
{
	cr_assert_eq(s->n, 4);
	cr_assert_eq(s->type[0], WATCHEV_ADDED);
	cr_assert_eq(s->type[1], WATCHEV_MODIFIED);
	cr_assert_eq(s->type[2], WATCHEV_BOOKMARK);
	cr_assert_eq(s->type[3], WATCHEV_DELETED);
	cr_assert_str_eq(s->rv[0], "11");
	cr_assert_str_eq(s->rv[1], "12");
	cr_assert_str_eq(s->rv[2], "15");
	cr_assert_str_eq(s->rv[3], "16");
}

Test(watchev, every_split_gives_the_same_events)
{
	const char	*text = STREAM;
	size_t		 len = strlen(text), cut, cut2;
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	for (cut = 0; cut <= len; cut++) {
		d = watchev_new(collect, &s);
		cr_assert_eq(watchev_feed(d, text, cut), 0, "cut %zu", cut);
		cr_assert_eq(watchev_feed(d, text + cut, len - cut), 0,
		    "cut %zu: %s", cut, watchev_cause(d));
		check_stream(&s);
		cr_assert(watchev_idle(d));
		watchev_free(d);
		seen_clear(&s);
	}
	/* Cut in three, every pair of offsets a few bytes apart. */
	for (cut = 0; cut <= len; cut += 3) {
		for (cut2 = cut; cut2 <= len; cut2 += 7) {
			d = watchev_new(collect, &s);
			cr_assert_eq(watchev_feed(d, text, cut), 0);
			cr_assert_eq(watchev_feed(d, text + cut, cut2 - cut), 0);
			cr_assert_eq(watchev_feed(d, text + cut2, len - cut2),
			    0);
			check_stream(&s);
			watchev_free(d);
			seen_clear(&s);
		}
	}
}

Test(watchev, byte_by_byte)
{
	const char	*text = STREAM;
	size_t		 i;
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	for (i = 0; i < strlen(text); i++) {
		cr_assert_eq(watchev_feed(d, text + i, 1), 0);
		/* Idle only between events. */
		if (text[i] == '\n')
			cr_assert(watchev_idle(d), "at %zu", i);
	}
	check_stream(&s);
	watchev_free(d);
	seen_clear(&s);
}

Test(watchev, several_events_in_one_piece)
{
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, STREAM, strlen(STREAM)), 0);
	check_stream(&s);
	/* A piece that ends inside an event: not idle. */
	cr_assert_eq(watchev_feed(d, " \n{\"type\"", 9), 0);
	cr_assert_not(watchev_idle(d));
	watchev_free(d);
	seen_clear(&s);
}

Test(watchev, empty_and_whitespace)
{
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, "", 0), 0);
	cr_assert_eq(watchev_feed(d, " \r\n\t\n", 5), 0);
	cr_assert(watchev_idle(d));
	cr_assert_eq(s.n, 0);
	cr_assert_eq(watchev_error(d), WATCHEV_OK);
	cr_assert_null(watchev_cause(d));
	watchev_free(d);
	watchev_free(NULL);
}

/* The limit: an event of exactly WATCHEV_MAX_EVENT bytes passes, one
 * byte more is refused, however it arrives. */
static char *
event_of(size_t size)
{
	static const char	 head[] = "{\"type\":\"ADDED\",\"object\":"
	    "{\"metadata\":{\"resourceVersion\":\"7\",\"x\":\"";
	static const char	 tail[] = "\"}}}";
	char			*buf;

	buf = xmalloc(size + 1);
	memcpy(buf, head, sizeof head - 1);
	memset(buf + sizeof head - 1, 'a', size - (sizeof head - 1) -
	    (sizeof tail - 1));
	memcpy(buf + size - (sizeof tail - 1), tail, sizeof tail);
	return (buf);
}

Test(watchev, size_limit)
{
	struct watchev	*d;
	struct seen	 s;
	char		*ev;
	size_t		 i;

	memset(&s, 0, sizeof s);
	ev = event_of(WATCHEV_MAX_EVENT);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, ev, WATCHEV_MAX_EVENT), 0,
	    "%s", watchev_cause(d));
	cr_assert_eq(s.n, 1);
	watchev_free(d);
	seen_clear(&s);
	free(ev);

	ev = event_of(WATCHEV_MAX_EVENT + 1);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, ev, WATCHEV_MAX_EVENT + 1), -1);
	cr_assert_eq(watchev_error(d), WATCHEV_ETOOBIG);
	cr_assert_not_null(strstr(watchev_cause(d), "larger than"));
	cr_assert_eq(s.n, 0);
	watchev_free(d);

	/* In 64 KiB pieces: refused on the piece that passes the limit. */
	d = watchev_new(collect, &s);
	for (i = 0; i < WATCHEV_MAX_EVENT; i += 65536)
		cr_assert_eq(watchev_feed(d, ev + i, 65536), 0);
	cr_assert_eq(watchev_feed(d, ev + i, 1), -1);
	cr_assert_eq(watchev_error(d), WATCHEV_ETOOBIG);
	/* Failed for good, whatever comes next. */
	cr_assert_eq(watchev_feed(d, STREAM, strlen(STREAM)), -1);
	cr_assert_eq(s.n, 0);
	cr_assert_not(watchev_idle(d));
	watchev_free(d);
	free(ev);
}

static void
expect_error(const char *text, enum watchev_error want, const char *words)
{
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, text, strlen(text)), -1, "%s", text);
	cr_assert_eq(watchev_error(d), want, "%s: %s, not %s", text,
	    watchev_error_name(watchev_error(d)), watchev_error_name(want));
	cr_assert_not_null(strstr(watchev_cause(d), words), "%s: %s", text,
	    watchev_cause(d));
	cr_assert_eq(watchev_feed(d, "\n", 1), -1);
	watchev_free(d);
	seen_clear(&s);
}

Test(watchev, malformed_events_named)
{
	expect_error("[1,2]", WATCHEV_ENOTOBJECT, "not a JSON object");
	expect_error("\"ADDED\"", WATCHEV_ENOTOBJECT, "not a JSON object");
	expect_error("  42\n", WATCHEV_ENOTOBJECT, "not a JSON object");
	expect_error("{\"type\": ADDED}", WATCHEV_EJSON, "not JSON");
	expect_error("{\"type\":\"ADDED\",]", WATCHEV_EJSON, "not JSON");
	expect_error("{\"object\":{}}", WATCHEV_ETYPE, "without a type");
	expect_error("{\"type\":7,\"object\":{}}", WATCHEV_ETYPE,
	    "without a type");
	expect_error("{\"type\":\"CHANGED\",\"object\":{}}", WATCHEV_ETYPE,
	    "unknown event type \"CHANGED\"");
	expect_error("{\"type\":\"ADDED\"}", WATCHEV_ENOOBJECT,
	    "ADDED event without an object");
	expect_error("{\"type\":\"MODIFIED\",\"object\":[]}", WATCHEV_ENOOBJECT,
	    "MODIFIED event without an object");
	expect_error("{\"type\":\"ERROR\"}", WATCHEV_ENOOBJECT,
	    "ERROR event without an object");
	expect_error("{\"type\":\"DELETED\",\"object\":{\"kind\":\"Node\"}}",
	    WATCHEV_ENOMETA, "DELETED event: object without metadata");
	expect_error("{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":1}}",
	    WATCHEV_ENOMETA, "BOOKMARK event: object without metadata");
	expect_error("{\"type\":\"ADDED\",\"object\":{\"metadata\":{}}}",
	    WATCHEV_ENORV, "without metadata.resourceVersion");
	expect_error("{\"type\":\"ADDED\",\"object\":{\"metadata\":"
	    "{\"resourceVersion\":5}}}", WATCHEV_ENORV,
	    "without metadata.resourceVersion");
	/* Duplicate keys are refused, as everywhere else. */
	expect_error("{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{}}",
	    WATCHEV_EJSON, "not JSON");
}

Test(watchev, good_events_before_a_bad_one_are_delivered)
{
	struct watchev	*d;
	struct seen	 s;
	const char	*text = "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
	    "{\"resourceVersion\":\"3\"}}}\n{\"type\":\"NOPE\"}\n"
	    "{\"type\":\"ADDED\",\"object\":{\"metadata\":"
	    "{\"resourceVersion\":\"4\"}}}\n";

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, text, strlen(text)), -1);
	cr_assert_eq(s.n, 1);
	cr_assert_str_eq(s.rv[0], "3");
	cr_assert_eq(watchev_error(d), WATCHEV_ETYPE);
	watchev_free(d);
	seen_clear(&s);
}

Test(watchev, error_410_gone)
{
	struct watchev	*d;
	struct seen	 s;
	const char	*text = "{\"type\":\"ERROR\",\"object\":{\"kind\":"
	    "\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
	    "\"Failure\",\"message\":\"too old resource version: 5 (9)\","
	    "\"reason\":\"Expired\",\"code\":410}}\n";

	memset(&s, 0, sizeof s);
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, text, strlen(text)), -1);
	cr_assert_eq(watchev_error(d), WATCHEV_ESTATUS);
	cr_assert_eq(watchev_status_code(d), 410);
	cr_assert_str_eq(watchev_status_message(d),
	    "too old resource version: 5 (9)");
	cr_assert_str_eq(watchev_cause(d),
	    "ERROR event: code 410: too old resource version: 5 (9)");
	cr_assert_eq(s.n, 0);
	watchev_free(d);

	/* An ERROR without a Status: code 0, no message. */
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, "{\"type\":\"ERROR\",\"object\":{}}", 28),
	    -1);
	cr_assert_eq(watchev_error(d), WATCHEV_ESTATUS);
	cr_assert_eq(watchev_status_code(d), 0);
	cr_assert_null(watchev_status_message(d));
	watchev_free(d);
}

Test(watchev, callback_stops)
{
	struct watchev	*d;
	struct seen	 s;

	memset(&s, 0, sizeof s);
	s.stop_at = 2;
	d = watchev_new(collect, &s);
	cr_assert_eq(watchev_feed(d, STREAM, strlen(STREAM)), -1);
	cr_assert_eq(s.n, 2);
	cr_assert_eq(watchev_error(d), WATCHEV_ESTOPPED);
	watchev_free(d);
	seen_clear(&s);
}

Test(watchev, names)
{
	cr_assert_str_eq(watchev_type_name(WATCHEV_BOOKMARK), "BOOKMARK");
	cr_assert_str_eq(watchev_error_name(WATCHEV_ETOOBIG), "WATCHEV_ETOOBIG");
	cr_assert_str_eq(watchev_error_name(WATCHEV_ESTOPPED),
	    "WATCHEV_ESTOPPED");
}
