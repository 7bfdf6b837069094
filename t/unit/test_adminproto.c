/*
 * test_adminproto.c: the admin socket's newline-delimited JSON (R-ADMIN)
 * under R-BAD: any split of the stream gives the same requests, each bad
 * line gets its own error and the next line still works, an over-long line
 * is refused once and skipped, replies are single valid lines.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adminproto.h"
#include "xmalloc.h"

/* What the callback saw, one entry per line: "cmd|arg|arg" or "!error". */
struct seen {
	char	*events[64];
	size_t	 n;
	size_t	 stop_after;	/* stop after this many; 0 never */
};

static int
record(void *arg, const char *command, const char *const *args,
    size_t nargs, const char *error)
{
	struct seen	*seen = arg;
	char		*e, *next;
	size_t		 i;

	cr_assert_lt(seen->n, sizeof seen->events / sizeof seen->events[0]);
	if (error != NULL) {
		cr_assert_null(command);
		xasprintf(&e, "!%s", error);
	} else {
		cr_assert_not_null(command);
		cr_assert_not_null(args);
		cr_assert_null(args[nargs], "args is NULL-terminated");
		e = xstrdup(command);
		for (i = 0; i < nargs; i++) {
			xasprintf(&next, "%s|%s", e, args[i]);
			free(e);
			e = next;
		}
	}
	seen->events[seen->n++] = e;
	return (seen->stop_after != 0 && seen->n >= seen->stop_after);
}

static void
seen_clear(struct seen *seen)
{
	size_t	i;

	for (i = 0; i < seen->n; i++)
		free(seen->events[i]);
	seen->n = 0;
}

/* Feeds everything in one call; the whole input must be consumed. */
static void
feed_all(struct adminproto *ap, struct seen *seen, const char *buf,
    size_t len)
{
	cr_assert_eq(adminproto_feed(ap, buf, len, record, seen), len);
}

/* The events of input fed whole, as "a;b;c" (caller frees). */
static char *
events(const struct seen *seen)
{
	char	*out = xstrdup(""), *next;
	size_t	 i;

	for (i = 0; i < seen->n; i++) {
		xasprintf(&next, "%s%s%s", out, i ? ";" : "",
		    seen->events[i]);
		free(out);
		out = next;
	}
	return (out);
}

static void
expect_events(const char *in, size_t len, const char *want)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	char			*got;

	adminproto_init(&ap);
	feed_all(&ap, &seen, in, len);
	got = events(&seen);
	cr_assert_str_eq(got, want, "input \"%.*s\"", (int)len, in);
	free(got);
	seen_clear(&seen);
	adminproto_clear(&ap);
}

#define EXPECT(in, want)	expect_events(in, sizeof in - 1, want)

Test(adminproto, requests)
{
	EXPECT("{\"command\":\"status\",\"args\":[]}\n", "status");
	EXPECT("{\"command\":\"status\"}\n", "status");
	EXPECT("{\"args\":[\"debug\"],\"command\":\"log-level\"}\n",
	    "log-level|debug");
	EXPECT(" { \"command\" : \"grants\" , \"args\" : [\"a\", \"b\"] }\r\n",
	    "grants|a|b");
	EXPECT("{\"command\":\"config\",\"args\":[\"caf\\u00e9\"]}\n",
	    "config|caf\xc3\xa9");
	EXPECT("{\"command\":\"status\"}", "");
}

Test(adminproto, several_in_one_buffer)
{
	EXPECT("{\"command\":\"status\"}\n{\"command\":\"reload\"}\n"
	    "{\"command\":\"pools\",\"args\":[\"x\"]}\n",
	    "status;reload;pools|x");
	EXPECT("\n\r\n  \t\n{\"command\":\"status\"}\n\n", "status");
}

Test(adminproto, split_at_every_byte)
{
	static const char	 in[] =
	    "{\"command\":\"status\"}\n"
	    "{\"command\":\"log-level\",\"args\":[\"debug\"]}\r\n"
	    "not json\n"
	    "{\"command\":\"grants\",\"args\":[\"\\n\",\"\\u00e9\"]}\n";
	struct adminproto	 ap;
	struct seen		 whole = { .n = 0 }, split = { .n = 0 };
	char			*want, *got;
	size_t			 len = sizeof in - 1, i, j;

	adminproto_init(&ap);
	feed_all(&ap, &whole, in, len);
	adminproto_clear(&ap);
	want = events(&whole);
	cr_assert_eq(whole.n, 4, "%s", want);
	cr_assert_str_eq(whole.events[0], "status");
	cr_assert_str_eq(whole.events[1], "log-level|debug");
	cr_assert_eq(whole.events[2][0], '!');
	cr_assert_str_eq(whole.events[3], "grants|\n|\xc3\xa9");

	for (i = 0; i <= len; i++) {
		adminproto_init(&ap);
		feed_all(&ap, &split, in, i);
		feed_all(&ap, &split, in + i, len - i);
		got = events(&split);
		cr_assert_str_eq(got, want, "split at %zu", i);
		free(got);
		seen_clear(&split);
		adminproto_clear(&ap);
	}

	adminproto_init(&ap);
	for (j = 0; j < len; j++)
		feed_all(&ap, &split, in + j, 1);
	got = events(&split);
	cr_assert_str_eq(got, want, "byte by byte");
	free(got);
	seen_clear(&split);
	adminproto_clear(&ap);
	seen_clear(&whole);
	free(want);
}

/* Each bad line gets one error naming the problem, and the next works. */
static void
refused(const char *line, const char *named)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	char			*in;

	xasprintf(&in, "%s\n{\"command\":\"status\"}\n", line);
	adminproto_init(&ap);
	feed_all(&ap, &seen, in, strlen(in));
	cr_assert_eq(seen.n, 2, "\"%s\"", line);
	cr_assert_eq(seen.events[0][0], '!', "\"%s\" accepted as %s", line,
	    seen.events[0]);
	cr_assert_not_null(strstr(seen.events[0], named),
	    "\"%s\": error \"%s\" does not name \"%s\"", line, seen.events[0],
	    named);
	cr_assert_str_eq(seen.events[1], "status");
	seen_clear(&seen);
	adminproto_clear(&ap);
	free(in);
}

Test(adminproto, bad_json)
{
	refused("{command:\"status\"}", "not valid JSON");
	refused("{\"command\":\"status\"", "not valid JSON");
	refused("{\"command\":\"status\"} {}", "not valid JSON");
	refused("{\"command\":\"st\xff\"}", "not valid JSON");
	refused("\"status\"", "not valid JSON");
	refused("42", "not valid JSON");
	refused("garbage", "not valid JSON");
}

Test(adminproto, bad_shapes)
{
	refused("[]", "not a JSON object");
	refused("[\"status\"]", "not a JSON object");
	refused("{}", "no \"command\"");
	refused("{\"args\":[]}", "no \"command\"");
	refused("{\"command\":1}", "\"command\" is not a string");
	refused("{\"command\":null}", "\"command\" is not a string");
	refused("{\"command\":[\"status\"]}", "\"command\" is not a string");
	refused("{\"command\":\"\"}", "\"command\" is empty");
	refused("{\"command\":\"x\",\"args\":\"y\"}", "\"args\" is not an "
	    "array");
	refused("{\"command\":\"x\",\"args\":{}}", "\"args\" is not an array");
	refused("{\"command\":\"x\",\"args\":[\"a\",1]}", "\"args\"[1] is not "
	    "a string");
	refused("{\"command\":\"x\",\"args\":[null]}", "\"args\"[0] is not a "
	    "string");
	refused("{\"command\":\"x\",\"extra\":1}", "unknown key \"extra\"");
	refused("{\"command\":\"x\",\"Args\":[]}", "unknown key \"Args\"");
	refused("{\"command\":\"x\",\"command\":\"y\"}", "not valid JSON");
}

Test(adminproto, nul_bytes)
{
	static const char	raw_in_string[] =
	    "{\"command\":\"st\0atus\"}\n{\"command\":\"status\"}\n";
	static const char	after_object[] =
	    "{\"command\":\"reload\"}\0\n{\"command\":\"status\"}\n";
	static const char	escaped[] =
	    "{\"command\":\"st\\u0000atus\"}\n{\"command\":\"status\"}\n";
	static const char	arg[] =
	    "{\"command\":\"x\",\"args\":[\"a\\u0000b\"]}\n"
	    "{\"command\":\"status\"}\n";
	struct adminproto	ap;
	struct seen		seen = { .n = 0 };
	const struct {
		const char	*in;
		size_t		 len;
	} cases[] = {
		{ raw_in_string, sizeof raw_in_string - 1 },
		{ after_object, sizeof after_object - 1 },
		{ escaped, sizeof escaped - 1 },
		{ arg, sizeof arg - 1 },
	};
	size_t			i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		adminproto_init(&ap);
		feed_all(&ap, &seen, cases[i].in, cases[i].len);
		cr_assert_eq(seen.n, 2, "case %zu", i);
		cr_assert_eq(seen.events[0][0], '!', "case %zu accepted: %s",
		    i, seen.events[0]);
		cr_assert_str_eq(seen.events[1], "status");
		seen_clear(&seen);
		adminproto_clear(&ap);
	}
}

/* A request padded with blanks inside the JSON to exactly len bytes. */
static char *
padded_request(size_t len)
{
	static const char	 head[] = "{\"command\":\"status\"";
	static const char	 tail[] = "}";
	char			*s;

	cr_assert_gt(len, sizeof head + sizeof tail);
	s = xmalloc(len + 2);
	memcpy(s, head, sizeof head - 1);
	memset(s + sizeof head - 1, ' ', len - (sizeof head - 1) -
	    (sizeof tail - 1));
	memcpy(s + len - (sizeof tail - 1), tail, sizeof tail - 1);
	s[len] = '\n';
	s[len + 1] = '\0';
	return (s);
}

Test(adminproto, line_cap)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	char			*max, *over, *msg;

	max = padded_request(ADMINPROTO_MAX_LINE);
	over = padded_request(ADMINPROTO_MAX_LINE + 1);
	xasprintf(&msg, "!request line longer than %d bytes",
	    ADMINPROTO_MAX_LINE);

	adminproto_init(&ap);
	feed_all(&ap, &seen, max, strlen(max));
	cr_assert_eq(seen.n, 1);
	cr_assert_str_eq(seen.events[0], "status", "a line of exactly the cap");
	feed_all(&ap, &seen, over, strlen(over));
	cr_assert_eq(seen.n, 2);
	cr_assert_str_eq(seen.events[1], msg);
	feed_all(&ap, &seen, "{\"command\":\"reload\"}\n",
	    strlen("{\"command\":\"reload\"}\n"));
	cr_assert_eq(seen.n, 3);
	cr_assert_str_eq(seen.events[2], "reload");
	seen_clear(&seen);
	adminproto_clear(&ap);

	/* The same split in two at every 4 KiB, ending in one newline. */
	adminproto_init(&ap);
	feed_all(&ap, &seen, over, 4096);
	feed_all(&ap, &seen, over + 4096, strlen(over) - 4096);
	cr_assert_eq(seen.n, 1);
	cr_assert_str_eq(seen.events[0], msg);
	seen_clear(&seen);
	adminproto_clear(&ap);

	free(msg);
	free(over);
	free(max);
}

/* An endless line: refused once, not buffered, then the stream resumes. */
Test(adminproto, endless_line_is_not_buffered)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	char			 chunk[1000];
	int			 i;

	memset(chunk, 'x', sizeof chunk);
	adminproto_init(&ap);
	for (i = 0; i < ADMINPROTO_MAX_LINE / 1000 + 1000; i++) {
		feed_all(&ap, &seen, chunk, sizeof chunk);
		cr_assert_leq(ap.len, ADMINPROTO_MAX_LINE);
		cr_assert_leq(ap.size, ADMINPROTO_MAX_LINE);
	}
	cr_assert_eq(seen.n, 1);
	cr_assert_eq(seen.events[0][0], '!');
	feed_all(&ap, &seen, "xx\n{\"command\":\"status\"}\n",
	    strlen("xx\n{\"command\":\"status\"}\n"));
	cr_assert_eq(seen.n, 2);
	cr_assert_str_eq(seen.events[1], "status");
	seen_clear(&seen);
	adminproto_clear(&ap);
}

/* At EOF a last line without its newline is a request; nothing else is. */
Test(adminproto, last_line_at_eof)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	char			 chunk[1000];
	const char		*two = "{\"command\":\"pools\"}\n"
				    "{\"command\":\"status\"}";
	int			 i;

	adminproto_init(&ap);
	feed_all(&ap, &seen, two, strlen(two));
	cr_assert_eq(seen.n, 1);
	cr_assert(adminproto_partial(&ap));
	adminproto_finish(&ap, record, &seen);
	cr_assert_eq(seen.n, 2);
	cr_assert_str_eq(seen.events[1], "status");
	cr_assert(!adminproto_partial(&ap));
	adminproto_finish(&ap, record, &seen);
	cr_assert_eq(seen.n, 2, "nothing left to finish");

	feed_all(&ap, &seen, "{\"comm", 6);
	adminproto_finish(&ap, record, &seen);
	cr_assert_eq(seen.n, 3);
	cr_assert_eq(strncmp(seen.events[2], "!request is not valid JSON",
	    26), 0, "%s", seen.events[2]);
	seen_clear(&seen);

	/* The rest of an over-long line was answered when it grew too long. */
	memset(chunk, 'x', sizeof chunk);
	for (i = 0; i < ADMINPROTO_MAX_LINE / 1000 + 100; i++)
		feed_all(&ap, &seen, chunk, sizeof chunk);
	cr_assert_eq(seen.n, 1);
	cr_assert(adminproto_partial(&ap));
	adminproto_finish(&ap, record, &seen);
	cr_assert_eq(seen.n, 1);
	cr_assert(!adminproto_partial(&ap));
	seen_clear(&seen);
	adminproto_clear(&ap);
}

Test(adminproto, callback_can_stop)
{
	static const char	 in[] = "{\"command\":\"a\"}\n"
	    "{\"command\":\"b\"}\n{\"command\":\"c\"}\n";
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0, .stop_after = 1 };
	size_t			 used, len = sizeof in - 1;

	adminproto_init(&ap);
	used = adminproto_feed(&ap, in, len, record, &seen);
	cr_assert_eq(used, strlen("{\"command\":\"a\"}\n"));
	cr_assert_eq(seen.n, 1);
	seen.stop_after = 0;
	feed_all(&ap, &seen, in + used, len - used);
	cr_assert_eq(seen.n, 3);
	cr_assert_str_eq(seen.events[1], "b");
	cr_assert_str_eq(seen.events[2], "c");
	seen_clear(&seen);
	adminproto_clear(&ap);
}

/* A reply is one line holding one JSON object. */
static json_t *
one_line(char *reply)
{
	json_error_t	 err;
	json_t		*j;
	size_t		 len;

	cr_assert_not_null(reply);
	len = strlen(reply);
	cr_assert_gt(len, 1);
	cr_assert_eq(reply[len - 1], '\n');
	cr_assert_eq(strchr(reply, '\n'), reply + len - 1, "\"%s\"", reply);
	j = json_loads(reply, 0, &err);
	cr_assert_not_null(j, "\"%s\": %s", reply, err.text);
	free(reply);
	return (j);
}

Test(adminproto, replies)
{
	json_t	*r, *want;

	want = json_pack("{s:i, s:s}", "configGeneration", 3, "note", "a\nb");
	r = one_line(adminproto_reply_ok(json_incref(want)));
	cr_assert(json_is_true(json_object_get(r, "ok")));
	cr_assert(json_equal(json_object_get(r, "result"), want));
	cr_assert_eq(json_object_size(r), 2);
	json_decref(r);
	json_decref(want);

	r = one_line(adminproto_reply_ok(NULL));
	cr_assert(json_is_true(json_object_get(r, "ok")));
	cr_assert(json_is_null(json_object_get(r, "result")));
	json_decref(r);

	r = one_line(adminproto_reply_error("unknown command \"x\"\nforged"));
	cr_assert(json_is_false(json_object_get(r, "ok")));
	cr_assert_str_eq(json_string_value(json_object_get(r, "error")),
	    "unknown command \"x\"\nforged");
	cr_assert_eq(json_object_size(r), 2);
	json_decref(r);

	r = one_line(adminproto_reply_error("bad \xff byte"));
	cr_assert_str_eq(json_string_value(json_object_get(r, "error")),
	    "bad ? byte");
	json_decref(r);
}

Test(adminproto, client_side)
{
	const char *const	 args[] = { "debug", "with space" };
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	json_t			*result = NULL, *want;
	char			*line, *error = NULL;

	line = adminproto_request("log-level", args, 2);
	cr_assert_not_null(line);
	adminproto_init(&ap);
	feed_all(&ap, &seen, line, strlen(line));
	cr_assert_eq(seen.n, 1);
	cr_assert_str_eq(seen.events[0], "log-level|debug|with space");
	free(line);
	line = adminproto_request("status", NULL, 0);
	feed_all(&ap, &seen, line, strlen(line));
	cr_assert_str_eq(seen.events[1], "status");
	free(line);
	seen_clear(&seen);
	adminproto_clear(&ap);
	cr_assert_null(adminproto_request("bad\xff", NULL, 0));

	want = json_pack("{s:b}", "connected", 1);
	line = adminproto_reply_ok(json_incref(want));
	cr_assert_eq(adminproto_parse_reply(line, strlen(line), &result,
	    &error), 1);
	cr_assert(json_equal(result, want));
	cr_assert_null(error);
	json_decref(result);
	json_decref(want);
	free(line);

	line = adminproto_reply_error("no such pool");
	cr_assert_eq(adminproto_parse_reply(line, strlen(line), &result,
	    &error), 0);
	cr_assert_null(result);
	cr_assert_str_eq(error, "no such pool");
	free(error);
	free(line);

	cr_assert_eq(adminproto_parse_reply("{\"ok\":1}", 8, &result, &error),
	    -EBADMSG);
	cr_assert_not_null(error);
	free(error);
	cr_assert_eq(adminproto_parse_reply("{\"ok\":false}", 12, &result,
	    &error), -EBADMSG);
	free(error);
	cr_assert_eq(adminproto_parse_reply("nope\n", 5, &result, &error),
	    -EBADMSG);
	free(error);
}

/* Bytes as an argument: base64 as RFC 4648 gives it, one text per bytes. */
Test(adminproto, base64)
{
	static const char *const v[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" }
	};
	static const char *const bad[] = {
		"Zg=", "Zh==", "Zm9=", "Z===", "====", "=Zg=", "Zg==Zg==",
		"Zm9v!A==", "Zm 9", "Zm9v\n"
	};
	unsigned char	 all[256];
	char		*text, *out;
	size_t		 i, len;

	for (i = 0; i < sizeof v / sizeof v[0]; i++) {
		text = adminproto_b64(v[i][0], strlen(v[i][0]));
		cr_assert_str_eq(text, v[i][1]);
		cr_assert_eq(adminproto_unb64(text, strlen(text), &out, &len),
		    0, "%s", text);
		cr_assert_eq(len, strlen(v[i][0]));
		cr_assert_str_eq(out, v[i][0]);
		free(out);
		free(text);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(adminproto_unb64(bad[i], strlen(bad[i]), &out,
		    &len), -EINVAL, "\"%s\" taken", bad[i]);
		cr_assert_null(out);
	}
	/* Every byte value, at every length modulo 3. */
	for (i = 0; i < sizeof all; i++)
		all[i] = (unsigned char)(255 - i);
	for (i = 253; i <= sizeof all; i++) {
		text = adminproto_b64(all, i);
		cr_assert_eq(strlen(text), ADMINPROTO_B64_LEN(i));
		cr_assert_eq(adminproto_unb64(text, strlen(text), &out, &len),
		    0);
		cr_assert_eq(len, i);
		cr_assert_eq(memcmp(out, all, i), 0);
		free(out);
		free(text);
	}
}

/* A config as large as a config file may be fits in one request line. */
Test(adminproto, a_whole_config_fits)
{
	struct adminproto	 ap;
	struct seen		 seen = { .n = 0 };
	const char		*args[2] = { "--dry-run", NULL };
	char			*config, *req, *expect;
	size_t			 off, n;

	/* Whatever the bytes, base64 makes 4 of 3. */
	config = xmalloc(ADMINPROTO_MAX_CONFIG);
	memset(config, '\n', ADMINPROTO_MAX_CONFIG);
	args[1] = adminproto_b64(config, ADMINPROTO_MAX_CONFIG);
	req = adminproto_request("reload", args, 2);
	cr_assert_not_null(req);
	cr_assert_leq(strlen(req) - 1, ADMINPROTO_MAX_LINE);
	cr_assert_geq(ADMINPROTO_MAX_LINE - (strlen(req) - 1), 32 * 1024,
	    "room for the rest of the request");
	/* As a socket gives it: in pieces, buffered up to the cap. */
	adminproto_init(&ap);
	for (off = 0; off < strlen(req); off += n) {
		n = strlen(req) - off < 65536 ? strlen(req) - off : 65536;
		feed_all(&ap, &seen, req + off, n);
		if (off + n < strlen(req))
			cr_assert_leq(ap.size, ADMINPROTO_MAX_LINE);
	}
	cr_assert_eq(seen.n, 1);
	xasprintf(&expect, "reload|--dry-run|%s", args[1]);
	cr_assert_str_eq(seen.events[0], expect);
	seen_clear(&seen);
	adminproto_clear(&ap);
	free(expect);
	free(req);
	free((char *)args[1]);
	free(config);
}
