/*
 * adminproto.c owns the admin socket's framing and message shapes: it
 * splits a byte stream into lines under a size cap, checks each request
 * strictly (a typo in a key is refused, not ignored) and builds replies.
 * It owns no file descriptor: admin.c feeds it and writes what it returns.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adminproto.h"
#include "xmalloc.h"

/* A buffer bigger than this is given back once its line is handled. */
#define ADMINPROTO_KEEP		4096

void
adminproto_init(struct adminproto *ap)
{
	ap->buf = NULL;
	ap->len = 0;
	ap->size = 0;
	ap->discard = 0;
}

void
adminproto_clear(struct adminproto *ap)
{
	free(ap->buf);
	adminproto_init(ap);
}

static void
adminproto_append(struct adminproto *ap, const char *p, size_t n)
{
	size_t	size;

	if (ap->len + n > ap->size) {
		size = ap->size == 0 ? 256 : ap->size;
		while (size < ap->len + n)
			size *= 2;
		/* A line is refused past the cap: no room beyond it. */
		if (size > ADMINPROTO_MAX_LINE && ap->len + n <=
		    ADMINPROTO_MAX_LINE)
			size = ADMINPROTO_MAX_LINE;
		ap->buf = xreallocarray(ap->buf, size, 1);
		ap->size = size;
	}
	memcpy(ap->buf + ap->len, p, n);
	ap->len += n;
}

/* Checks one request and calls back; returns what the callback did. */
static int
adminproto_line(const char *line, size_t n, adminproto_cb cb, void *arg)
{
	json_error_t	 jerr;
	json_t		*req, *command, *args, *v;
	const char	*key, **argv = NULL;
	char		 error[256];
	size_t		 i, nargs = 0;
	int		 rc;

	if (n > 0 && line[n - 1] == '\r')
		n--;
	for (i = 0; i < n; i++) {
		if (line[i] != ' ' && line[i] != '\t')
			break;
	}
	if (i == n)
		return (0);

	*error = '\0';
	req = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL) {
		snprintf(error, sizeof error, "request is not valid JSON "
		    "(column %d: %s)", jerr.column, jerr.text);
		return (cb(arg, NULL, NULL, 0, error));
	}
	command = json_object_get(req, "command");
	args = json_object_get(req, "args");
	if (!json_is_object(req))
		snprintf(error, sizeof error, "request is not a JSON object");
	else if (command == NULL)
		snprintf(error, sizeof error, "request has no \"command\"");
	else if (!json_is_string(command))
		snprintf(error, sizeof error, "\"command\" is not a string");
	else if (json_string_length(command) == 0)
		snprintf(error, sizeof error, "\"command\" is empty");
	else if (args != NULL && !json_is_array(args))
		snprintf(error, sizeof error, "\"args\" is not an array");
	else {
		json_object_foreach(req, key, v) {
			if (strcmp(key, "command") != 0 &&
			    strcmp(key, "args") != 0) {
				snprintf(error, sizeof error, "unknown key "
				    "\"%.64s\" in request", key);
				break;
			}
		}
	}
	if (*error == '\0') {
		nargs = json_array_size(args);
		argv = xreallocarray(NULL, nargs + 1, sizeof *argv);
		json_array_foreach(args, i, v) {
			if (!json_is_string(v)) {
				snprintf(error, sizeof error, "\"args\"[%zu] "
				    "is not a string", i);
				break;
			}
			argv[i] = json_string_value(v);
		}
		argv[nargs] = NULL;
	}
	if (*error != '\0')
		rc = cb(arg, NULL, NULL, 0, error);
	else
		rc = cb(arg, json_string_value(command), argv, nargs, NULL);
	free(argv);
	json_decref(req);
	return (rc);
}

size_t
adminproto_feed(struct adminproto *ap, const char *buf, size_t len,
    adminproto_cb cb, void *arg)
{
	const char	*nl, *line;
	size_t		 off = 0, n, linelen;
	char		 error[128];
	int		 stop;

	while (off < len) {
		nl = memchr(buf + off, '\n', len - off);
		n = nl != NULL ? (size_t)(nl - (buf + off)) : len - off;
		if (ap->discard) {
			off += n + (nl != NULL);
			if (nl != NULL)
				ap->discard = 0;
			continue;
		}
		if (ap->len + n > ADMINPROTO_MAX_LINE) {
			/* Refused now, not at its newline, which may never
			 * come. */
			ap->len = 0;
			ap->discard = nl == NULL;
			off += n + (nl != NULL);
			snprintf(error, sizeof error, "request line longer "
			    "than %d bytes", ADMINPROTO_MAX_LINE);
			if (cb(arg, NULL, NULL, 0, error) != 0)
				return (off);
			continue;
		}
		if (nl == NULL) {
			adminproto_append(ap, buf + off, n);
			return (len);
		}
		if (ap->len == 0) {
			line = buf + off;
			linelen = n;
		} else {
			adminproto_append(ap, buf + off, n);
			line = ap->buf;
			linelen = ap->len;
		}
		off += n + 1;
		stop = adminproto_line(line, linelen, cb, arg);
		ap->len = 0;
		if (ap->size > ADMINPROTO_KEEP) {
			free(ap->buf);
			ap->buf = NULL;
			ap->size = 0;
		}
		if (stop != 0)
			return (off);
	}
	return (off);
}

void
adminproto_finish(struct adminproto *ap, adminproto_cb cb, void *arg)
{
	if (ap->discard || ap->len == 0) {
		ap->discard = 0;
		ap->len = 0;
		return;
	}
	/* A client that half-closes after its request waits for the answer. */
	(void)adminproto_line(ap->buf, ap->len, cb, arg);
	adminproto_clear(ap);
}

int
adminproto_partial(const struct adminproto *ap)
{
	return (ap->len > 0 || ap->discard);
}

/* Dumps a reply object (a new reference, consumed) as one line. */
static char *
adminproto_line_out(json_t *reply)
{
	char	*s, *line;

	s = json_dumps(reply, JSON_COMPACT);
	json_decref(reply);
	if (s == NULL)
		return (NULL);
	xasprintf(&line, "%s\n", s);
	free(s);
	return (line);
}

char *
adminproto_reply_ok(json_t *result)
{
	json_t	*reply;
	char	*line;

	if (result == NULL)
		result = json_null();
	if ((reply = json_object()) == NULL) {
		json_decref(result);
		return (adminproto_reply_error("out of memory"));
	}
	json_object_set_new(reply, "ok", json_true());
	json_object_set_new(reply, "result", result);
	if ((line = adminproto_line_out(reply)) == NULL)
		return (adminproto_reply_error("the result cannot be encoded"));
	return (line);
}

char *
adminproto_reply_error(const char *error)
{
	json_t	*s;
	char	*copy, *line, *p;

	if (error == NULL)
		error = "unknown error";
	if ((s = json_string(error)) == NULL) {
		/* Not UTF-8: keep the ASCII part readable. */
		copy = xstrdup(error);
		for (p = copy; *p != '\0'; p++) {
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		}
		s = json_string(copy);
		free(copy);
	}
	line = adminproto_line_out(json_pack("{s:b, s:o*}", "ok", 0,
	    "error", s));
	if (line == NULL)
		line = xstrdup("{\"ok\":false,\"error\":\"out of memory\"}\n");
	return (line);
}

char *
adminproto_request(const char *command, const char *const *args,
    size_t nargs)
{
	json_t	*req, *a, *s;
	size_t	 i;

	if ((a = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < nargs; i++) {
		if ((s = json_string(args[i])) == NULL ||
		    json_array_append_new(a, s) != 0) {
			json_decref(a);
			return (NULL);
		}
	}
	if ((s = json_string(command)) == NULL) {
		json_decref(a);
		return (NULL);
	}
	if ((req = json_pack("{s:o, s:o}", "command", s, "args", a)) == NULL)
		return (NULL);
	return (adminproto_line_out(req));
}

int
adminproto_parse_reply(const char *line, size_t len, json_t **result,
    char **error)
{
	json_error_t	 jerr;
	json_t		*reply, *ok, *v;
	int		 rc;

	*result = NULL;
	*error = NULL;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if ((reply = json_loadb(line, len, 0, &jerr)) == NULL) {
		xasprintf(error, "reply is not valid JSON (column %d: %s)",
		    jerr.column, jerr.text);
		return (-EBADMSG);
	}
	ok = json_object_get(reply, "ok");
	if (!json_is_boolean(ok)) {
		*error = xstrdup("reply has no boolean \"ok\"");
		rc = -EBADMSG;
	} else if (json_is_true(ok)) {
		v = json_object_get(reply, "result");
		*result = json_incref(v != NULL ? v : json_null());
		rc = 1;
	} else if (!json_is_string(v = json_object_get(reply, "error"))) {
		*error = xstrdup("error reply has no \"error\" text");
		rc = -EBADMSG;
	} else {
		*error = xstrdup(json_string_value(v));
		rc = 0;
	}
	json_decref(reply);
	return (rc);
}

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
adminproto_b64(const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	char			*out, *o;
	unsigned long		 v;
	size_t			 i;

	o = out = xmalloc(ADMINPROTO_B64_LEN(len) + 1);
	for (i = 0; i + 2 < len; i += 3) {
		v = (unsigned long)p[i] << 16 | (unsigned long)p[i + 1] << 8 |
		    p[i + 2];
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = b64_chars[v >> 6 & 63];
		*o++ = b64_chars[v & 63];
	}
	if (i < len) {
		v = (unsigned long)p[i] << 16;
		if (i + 1 < len)
			v |= (unsigned long)p[i + 1] << 8;
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = i + 1 < len ? b64_chars[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return (out);
}

static int
b64_value(char c)
{
	const char	*p;

	if (c == '\0' || (p = strchr(b64_chars, c)) == NULL)
		return (-1);
	return ((int)(p - b64_chars));
}

int
adminproto_unb64(const char *text, size_t len, char **out, size_t *outlen)
{
	unsigned long	 v;
	size_t		 i, n = 0, pad = 0;
	char		*buf;
	int		 j, d;

	*out = NULL;
	*outlen = 0;
	if (len % 4 != 0)
		return (-EINVAL);
	if (len > 0 && text[len - 1] == '=')
		pad = len > 1 && text[len - 2] == '=' ? 2 : 1;
	buf = xmalloc(len / 4 * 3 + 1);
	for (i = 0; i < len; i += 4) {
		v = 0;
		for (j = 0; j < 4; j++) {
			/* '=' only as the padding of the last group. */
			if (i + (size_t)j >= len - pad)
				d = 0;
			else if ((d = b64_value(text[i + (size_t)j])) < 0) {
				free(buf);
				return (-EINVAL);
			}
			v = v << 6 | (unsigned long)d;
		}
		buf[n++] = (char)(v >> 16 & 0xff);
		buf[n++] = (char)(v >> 8 & 0xff);
		buf[n++] = (char)(v & 0xff);
	}
	/* The bits padding leaves over are zero: one text per bytes. */
	for (; pad > 0; pad--)
		if (buf[--n] != '\0') {
			free(buf);
			return (-EINVAL);
		}
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return (0);
}
