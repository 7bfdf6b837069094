/*
 * The HTTP endpoint (instrumentation.httpEndpoint): /healthz, /readyz and,
 * with instrumentation.prometheusExport, /metrics, served by libevent's
 * evhttp on the loop. Off while the key is empty.
 */
#ifndef TOPOAWARE_HTTP_H
#define TOPOAWARE_HTTP_H

#include "config.h"

/* Named limits (topoawared(8) lists them). */
#define HTTP_MAX_CONNS		16	/* connections at once */
#define HTTP_TIMEOUT_SEC	5	/* idle, read or write */
#define HTTP_REQUEST_DEADLINE_MS 10000	/* a request whole this soon */
#define HTTP_MAX_HEADERS	8192	/* bytes of request line and headers */
#define HTTP_MAX_BODY		1024	/* bytes of a request body */
#define HTTP_BACKLOG		16
/* Healthy while the loop turned this recently without a systemd
 * watchdog; with one, WatchdogSec. */
#define HTTP_LIVE_DEFAULT_MS	30000

struct server;
struct http;

/* Listens on cfg's endpoint, if any; an address that cannot be listened
 * on is an error naming it. */
int	http_new(struct server *, const struct config *, struct http **,
	    char **);
/* Closes the listener and every connection. NULL is a no-op. */
void	http_free(struct http *);

/*
 * A reload in two steps, so that it is refused whole when the new address
 * cannot be listened on: http_prepare listens on cfg's address when it
 * changed (the old listener stays), then http_commit closes the old one
 * and takes cfg's keys, or http_abort closes the new one.
 */
int	http_prepare(struct http *, const struct config *, char **);
void	http_commit(struct http *, const struct config *);
void	http_abort(struct http *);

#endif
