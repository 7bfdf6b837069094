/*
 * watchev.c decodes a Kubernetes watch stream (watchev.h). Events are
 * framed by a JSON-aware scan (nesting depth, strings, escapes) for the
 * end of each top-level object, not by newlines: the server puts one event
 * per line, but nothing in HTTP keeps the pieces on line boundaries. Only
 * the bytes of the event in progress are kept, and each byte is scanned
 * once; a framed event is then parsed whole by jansson and checked.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "watchev.h"
#include "xmalloc.h"

/* A Status message is cut to this many bytes in the cause. */
#define WATCHEV_MESSAGE_MAX	200

struct watchev {
	watchev_cb		 cb;
	void			*arg;

	char			*buf;	/* the event in progress */
	size_t			 len;
	size_t			 size;
	size_t			 depth;
	int			 in_string;
	int			 escaped;

	enum watchev_error	 error;
	char			*cause;
	int			 code;
	char			*message;
};

static const char *const watchev_types[] = {
	"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
};

static const char *const watchev_errors[] = {
	"WATCHEV_OK", "WATCHEV_ETOOBIG", "WATCHEV_ENOTOBJECT", "WATCHEV_EJSON",
	"WATCHEV_ETYPE", "WATCHEV_ENOOBJECT", "WATCHEV_ENOMETA",
	"WATCHEV_ENORV", "WATCHEV_ESTATUS", "WATCHEV_ESTOPPED"
};

struct watchev *
watchev_new(watchev_cb cb, void *arg)
{
	struct watchev	*d;

	d = xcalloc(1, sizeof *d);
	d->cb = cb;
	d->arg = arg;
	return (d);
}

void
watchev_free(struct watchev *d)
{
	if (d == NULL)
		return;
	free(d->buf);
	free(d->cause);
	free(d->message);
	free(d);
}

static int __attribute__((__format__(__printf__, 3, 4)))
watchev_fail(struct watchev *d, enum watchev_error error, const char *fmt,
    ...)
{
	va_list	ap;
	char	text[512];

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	d->error = error;
	free(d->cause);
	d->cause = xstrdup(text);
	free(d->buf);
	d->buf = NULL;
	d->len = d->size = 0;
	return (-1);
}

/* A peer's text fit for a cause: printable ASCII, cut short. */
static char *
watchev_clean(const char *s)
{
	char	*out;
	size_t	 i;

	out = xstrndup(s, WATCHEV_MESSAGE_MAX);
	for (i = 0; out[i] != '\0'; i++) {
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = '?';
	}
	return (out);
}

static int
watchev_status(struct watchev *d, json_t *obj)
{
	json_t	*code, *msg;
	char	*text = NULL;

	code = json_object_get(obj, "code");
	msg = json_object_get(obj, "message");
	d->code = json_is_integer(code) && json_integer_value(code) > 0 &&
	    json_integer_value(code) < 1000 ?
	    (int)json_integer_value(code) : 0;
	if (json_is_string(msg)) {
		d->message = xstrdup(json_string_value(msg));
		text = watchev_clean(d->message);
	}
	watchev_fail(d, WATCHEV_ESTATUS, "ERROR event: code %d%s%s", d->code,
	    text != NULL ? ": " : "", text != NULL ? text : "");
	free(text);
	return (-1);
}

/* One framed event in d->buf: parsed, checked, delivered. */
static int
watchev_event(struct watchev *d)
{
	json_t			*root, *type, *obj, *meta, *rv;
	json_error_t		 jerr;
	enum watchev_type	 t;
	char			*text;
	size_t			 i;
	int			 rc;

	root = json_loadb(d->buf, d->len, JSON_REJECT_DUPLICATES, &jerr);
	d->len = 0;
	if (root == NULL) {
		text = watchev_clean(jerr.text);
		watchev_fail(d, WATCHEV_EJSON, "event is not JSON: %s", text);
		free(text);
		return (-1);
	}
	type = json_object_get(root, "type");
	if (!json_is_string(type)) {
		json_decref(root);
		return (watchev_fail(d, WATCHEV_ETYPE, "%s",
		    "event without a type"));
	}
	for (i = 0; i < sizeof watchev_types / sizeof watchev_types[0]; i++) {
		if (strcmp(json_string_value(type), watchev_types[i]) == 0)
			break;
	}
	if (i == sizeof watchev_types / sizeof watchev_types[0]) {
		text = watchev_clean(json_string_value(type));
		watchev_fail(d, WATCHEV_ETYPE, "unknown event type \"%s\"",
		    text);
		free(text);
		json_decref(root);
		return (-1);
	}
	t = (enum watchev_type)i;
	obj = json_object_get(root, "object");
	if (!json_is_object(obj)) {
		json_decref(root);
		return (watchev_fail(d, WATCHEV_ENOOBJECT,
		    "%s event without an object", watchev_types[t]));
	}
	if (t == WATCHEV_ERROR) {
		rc = watchev_status(d, obj);
		json_decref(root);
		return (rc);
	}
	meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta)) {
		json_decref(root);
		return (watchev_fail(d, WATCHEV_ENOMETA,
		    "%s event: object without metadata", watchev_types[t]));
	}
	rv = json_object_get(meta, "resourceVersion");
	if (!json_is_string(rv) || json_string_length(rv) == 0) {
		json_decref(root);
		return (watchev_fail(d, WATCHEV_ENORV, "%s event: object "
		    "without metadata.resourceVersion", watchev_types[t]));
	}
	rc = d->cb(d->arg, t, obj);
	json_decref(root);
	if (rc != 0)
		return (watchev_fail(d, WATCHEV_ESTOPPED, "%s",
		    "stopped by the caller"));
	return (0);
}

/* Keeps bytes of the event in progress, within WATCHEV_MAX_EVENT. */
static int
watchev_keep(struct watchev *d, const char *p, size_t n)
{
	size_t	size;

	if (n > WATCHEV_MAX_EVENT - d->len)
		return (watchev_fail(d, WATCHEV_ETOOBIG,
		    "event larger than %u bytes", WATCHEV_MAX_EVENT));
	if (d->len + n > d->size) {
		size = d->size == 0 ? 4096 : d->size;
		while (size < d->len + n)
			size *= 2;
		if (size > WATCHEV_MAX_EVENT)
			size = WATCHEV_MAX_EVENT;
		d->buf = xreallocarray(d->buf, 1, size);
		d->size = size;
	}
	memcpy(d->buf + d->len, p, n);
	d->len += n;
	return (0);
}

int
watchev_feed(struct watchev *d, const void *data, size_t len)
{
	const char	*p = data, *start;
	size_t		 i;
	char		 c;

	if (d->error != WATCHEV_OK)
		return (-1);
	i = 0;
	while (i < len) {
		if (d->len == 0) {
			/* Between events: whitespace, then an object. */
			c = p[i];
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
				i++;
				continue;
			}
			if (c != '{')
				return (watchev_fail(d, WATCHEV_ENOTOBJECT,
				    "%s", "event is not a JSON object"));
		}
		start = p + i;
		for (; i < len; i++) {
			c = p[i];
			if (d->in_string) {
				if (d->escaped)
					d->escaped = 0;
				else if (c == '\\')
					d->escaped = 1;
				else if (c == '"')
					d->in_string = 0;
			} else if (c == '"')
				d->in_string = 1;
			else if (c == '{' || c == '[')
				d->depth++;
			else if (c == '}' || c == ']') {
				if (--d->depth == 0)
					break;
			}
		}
		if (i == len)
			return (watchev_keep(d, start, (size_t)(p + i - start)));
		i++;
		if (watchev_keep(d, start, (size_t)(p + i - start)) != 0 ||
		    watchev_event(d) != 0)
			return (-1);
	}
	return (0);
}

int
watchev_idle(const struct watchev *d)
{
	return (d->error == WATCHEV_OK && d->len == 0);
}

enum watchev_error
watchev_error(const struct watchev *d)
{
	return (d->error);
}

const char *
watchev_cause(const struct watchev *d)
{
	return (d->cause);
}

int
watchev_status_code(const struct watchev *d)
{
	return (d->code);
}

const char *
watchev_status_message(const struct watchev *d)
{
	return (d->message);
}

const char *
watchev_type_name(enum watchev_type t)
{
	if ((size_t)t >= sizeof watchev_types / sizeof watchev_types[0])
		return ("?");
	return (watchev_types[t]);
}

const char *
watchev_error_name(enum watchev_error e)
{
	if ((size_t)e >= sizeof watchev_errors / sizeof watchev_errors[0])
		return ("?");
	return (watchev_errors[e]);
}
