/*
 * httpreq.c decides the HTTP endpoint's answers: the path of the request
 * target (origin form; the query is ignored, nothing is decoded, so
 * "/%6detrics" is not /metrics), the method (GET and HEAD only: 405 with
 * Allow), and each path's status and text. No I/O.
 */
#include "autoconf.h"

#include <stdlib.h>
#include <string.h>

#include "httpreq.h"
#include "xmalloc.h"

#define HTTPREQ_TEXT	"text/plain; charset=utf-8"
/* The exposition format Prometheus asks for by default. */
#define HTTPREQ_PROM	"text/plain; version=0.0.4; charset=utf-8"
#define HTTPREQ_ALLOW	"GET, HEAD"
/* A not-ready reason is cut to this many bytes in the body. */
#define HTTPREQ_REASON_MAX	256

enum httpreq_path {
	PATH_UNKNOWN = 0,
	PATH_HEALTHZ,
	PATH_READYZ,
	PATH_METRICS
};

static const struct {
	const char		*path;
	enum httpreq_path	 id;
} paths[] = {
	{ "/healthz", PATH_HEALTHZ },
	{ "/readyz", PATH_READYZ },
	{ "/metrics", PATH_METRICS },
};

/* The path of an origin-form target, up to its query or fragment. */
static enum httpreq_path
path_of(const char *uri)
{
	size_t	i, n;

	n = strcspn(uri, "?#");
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (strlen(paths[i].path) == n &&
		    memcmp(paths[i].path, uri, n) == 0)
			return (paths[i].id);
	return (PATH_UNKNOWN);
}

static void
reply_text(struct httpreq_reply *r, int status, const char *reason,
    const char *body)
{
	r->status = status;
	r->reason = reason;
	r->content_type = HTTPREQ_TEXT;
	r->body = xstrdup(body);
}

/* The reason in the body: one line of printable ASCII, cut. */
static char *
reason_line(const char *why)
{
	char	*s;
	size_t	 i;

	if (why == NULL || *why == '\0')
		why = "not ready";
	xasprintf(&s, "%.*s\n", HTTPREQ_REASON_MAX, why);
	for (i = 0; s[i + 1] != '\0'; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			s[i] = '?';
	return (s);
}

void
httpreq_route(const char *method, const char *uri,
    const struct httpreq_state *st, struct httpreq_reply *r)
{
	enum httpreq_path	 path;

	memset(r, 0, sizeof *r);
	if (method == NULL || uri == NULL) {
		reply_text(r, 400, "Bad Request", "bad request\n");
		return;
	}
	if (strlen(uri) > HTTPREQ_URI_MAX) {
		reply_text(r, 414, "URI Too Long", "request target too long\n");
		return;
	}
	/* Origin form only; an absolute or authority form names no path
	 * of ours. */
	if (uri[0] != '/') {
		reply_text(r, 400, "Bad Request", "bad request target\n");
		return;
	}
	path = path_of(uri);
	if (path == PATH_UNKNOWN ||
	    (path == PATH_METRICS && !st->metrics)) {
		reply_text(r, 404, "Not Found", "not found\n");
		return;
	}
	r->head = strcmp(method, "HEAD") == 0;
	if (!r->head && strcmp(method, "GET") != 0) {
		reply_text(r, 405, "Method Not Allowed",
		    "method not allowed\n");
		r->allow = HTTPREQ_ALLOW;
		return;
	}
	switch (path) {
	case PATH_HEALTHZ:
		if (st->live)
			reply_text(r, 200, "OK", "ok\n");
		else
			reply_text(r, 503, "Service Unavailable",
			    "event loop stalled\n");
		break;
	case PATH_READYZ:
		if (st->ready)
			reply_text(r, 200, "OK", "ok\n");
		else {
			reply_text(r, 503, "Service Unavailable", "");
			free(r->body);
			r->body = reason_line(st->not_ready);
		}
		break;
	case PATH_METRICS:
		r->status = 200;
		r->reason = "OK";
		r->route = HTTPREQ_METRICS;
		r->content_type = HTTPREQ_PROM;
		r->body = xstrdup("");
		break;
	case PATH_UNKNOWN:
		abort();
	}
}

void
httpreq_reply_clear(struct httpreq_reply *r)
{
	free(r->body);
	r->body = NULL;
}
