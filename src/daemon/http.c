/*
 * http.c owns the HTTP endpoint: the listening socket of
 * instrumentation.httpEndpoint, libevent's evhttp server on it, the count
 * of its connections, and the facts each answer needs (is the loop
 * turning, is the daemon ready). httpreq.c decides every answer.
 *
 * libevent 2.1's evhttp has no connection cap and tells nobody of a new
 * connection, only of a request. So the bufferevent of each connection is
 * ours (evhttp_set_bevcb), held by a reference until, on the same pass of
 * the loop, the hook finds the evhttp connection behind it, asks to hear
 * of its close, and closes it when it is one too many. A request must be
 * whole within HTTP_REQUEST_DEADLINE_MS of the connection or of the
 * request before it, so a client dripping bytes cannot keep one of the
 * few places for ever; evhttp's own timeout drops idle and slow readers.
 * One answer at a time is buffered per connection, so output stays small.
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "clock.h"
#include "dra.h"
#include "http.h"
#include "httpreq.h"
#include "log.h"
#include "metrics.h"
#include "nri.h"
#include "sd.h"
#include "server.h"
#include "xmalloc.h"

/* After accept fails (EMFILE), listening pauses this long. */
#define HTTP_ACCEPT_PAUSE_SEC	1
/* The heartbeat that says the loop turns, at most this far apart (and at
 * most a quarter of the period it must turn in). */
#define HTTP_BEAT_MS		1000

struct http_conn {
	struct http		 *h;
	struct bufferevent	 *bev;
	struct evhttp_connection *evcon;	/* NULL until hooked */
	struct event		 *ev_deadline;
	TAILQ_ENTRY(http_conn)	  entry;
};
TAILQ_HEAD(http_conns, http_conn);

struct http {
	struct server			*srv;
	struct evhttp			*evh;
	struct evhttp_bound_socket	*bound;
	struct evhttp_bound_socket	*pending;	/* a reload's */
	char				*endpoint;	/* "" when off */
	int				 metrics;
	struct event			*ev_beat;
	struct event			*ev_hook;
	struct event			*ev_resume;
	uint64_t			 beat;		/* ms */
	uint64_t			 live_ms;
	struct http_conns		 conns;
	int				 nconns;
	int				 nunhooked;
};

static void
conn_gone(struct http_conn *c)
{
	TAILQ_REMOVE(&c->h->conns, c, entry);
	c->h->nconns--;
	event_free(c->ev_deadline);
	free(c);
}

/* evhttp frees the connection: it was closed, timed out or failed. */
static void
conn_closed_cb(struct evhttp_connection *evcon, void *arg)
{
	conn_gone(arg);
}

/* We close it: evhttp is not on the stack (a timer or the hook). */
static void
conn_drop(struct http_conn *c)
{
	evhttp_connection_set_closecb(c->evcon, NULL, NULL);
	evhttp_connection_free(c->evcon);
	conn_gone(c);
}

static void
conn_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http_conn	*c = arg;

	log_debug("http: a request was not whole within %d ms, closing",
	    HTTP_REQUEST_DEADLINE_MS);
	conn_drop(c);
}

static void
conn_arm(struct http_conn *c)
{
	struct timeval	tv;

	tv.tv_sec = HTTP_REQUEST_DEADLINE_MS / 1000;
	tv.tv_usec = (HTTP_REQUEST_DEADLINE_MS % 1000) * 1000;
	if (evtimer_add(c->ev_deadline, &tv) != 0)
		log_warnx("http: cannot arm a request deadline");
}

/* evhttp wants the bufferevent of a new connection: it is counted. */
static struct bufferevent *
bev_cb(struct event_base *base, void *arg)
{
	struct http		*h = arg;
	struct http_conn	*c;
	struct bufferevent	*bev;

	if ((bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE)) ==
	    NULL)
		return (NULL);
	c = xcalloc(1, sizeof *c);
	if ((c->ev_deadline = evtimer_new(base, conn_deadline_cb, c)) ==
	    NULL) {
		free(c);
		bufferevent_free(bev);
		return (NULL);
	}
	c->h = h;
	c->bev = bev;
	/* Ours until the hook: evhttp may give it up before then. */
	bufferevent_incref(bev);
	TAILQ_INSERT_TAIL(&h->conns, c, entry);
	h->nconns++;
	h->nunhooked++;
	event_active(h->ev_hook, EV_TIMEOUT, 0);
	return (bev);
}

/* The connections bev_cb counted, now that evhttp holds them. */
static void
hook_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http		*h = arg;
	struct http_conn	*c, *next;
	bufferevent_data_cb	 rd;
	struct bufferevent	*bev;
	void			*cbarg;

	/* glibc's queue.h has no TAILQ_FOREACH_SAFE. */
	for (c = TAILQ_FIRST(&h->conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->evcon != NULL)
			continue;
		h->nunhooked--;
		bev = c->bev;
		/* evhttp sets its callbacks, with the connection as their
		 * argument, until it frees the connection. */
		bufferevent_getcb(bev, &rd, NULL, NULL, &cbarg);
		if (rd == NULL || cbarg == NULL) {
			conn_gone(c);
			bufferevent_decref(bev);
			continue;
		}
		c->evcon = cbarg;
		evhttp_connection_set_closecb(c->evcon, conn_closed_cb, c);
		bufferevent_decref(bev);
		if (h->nconns > HTTP_MAX_CONNS) {
			metrics_inc("errors", "kind", "http_limit");
			log_debug("http: %d connections, closing a new one",
			    h->nconns);
			conn_drop(c);
			continue;
		}
		conn_arm(c);
	}
}

static struct http_conn *
conn_of(struct http *h, struct evhttp_connection *evcon)
{
	struct http_conn	*c;

	TAILQ_FOREACH(c, &h->conns, entry)
		if (c->evcon == evcon)
			return (c);
	return (NULL);
}

static const char *
method_name(enum evhttp_cmd_type cmd)
{
	switch (cmd) {
	case EVHTTP_REQ_GET:
		return ("GET");
	case EVHTTP_REQ_POST:
		return ("POST");
	case EVHTTP_REQ_HEAD:
		return ("HEAD");
	case EVHTTP_REQ_PUT:
		return ("PUT");
	case EVHTTP_REQ_DELETE:
		return ("DELETE");
	case EVHTTP_REQ_OPTIONS:
		return ("OPTIONS");
	case EVHTTP_REQ_TRACE:
		return ("TRACE");
	case EVHTTP_REQ_CONNECT:
		return ("CONNECT");
	case EVHTTP_REQ_PATCH:
		return ("PATCH");
	}
	return ("?");
}

/* NULL when ready, else why not. */
static const char *
not_ready(struct server *srv)
{
	if (srv->nri == NULL || !nri_synchronized(srv->nri))
		return ("NRI: not synchronized with the runtime");
	/* Without an API client DRA cannot work at all; status says why. */
	if (srv->cfg->dra_enabled && srv->kube != NULL &&
	    (srv->dra == NULL || !dra_registered(srv->dra)))
		return ("DRA: not registered with the kubelet");
	return (NULL);
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct http		*h = arg;
	struct httpreq_state	 st;
	struct httpreq_reply	 r;
	struct http_conn	*c;
	struct evkeyvalq	*out;
	struct evbuffer		*buf;
	json_t			*pools, *grants;
	char			*text = NULL, len[32];

	if ((c = conn_of(h, evhttp_request_get_connection(req))) != NULL)
		conn_arm(c);
	memset(&st, 0, sizeof st);
	st.live = clock_mono_ms() - h->beat <= h->live_ms;
	st.not_ready = not_ready(h->srv);
	st.ready = st.not_ready == NULL;
	st.metrics = h->metrics;
	httpreq_route(method_name(evhttp_request_get_command(req)),
	    evhttp_request_get_uri(req), &st, &r);
	if (r.route == HTTPREQ_METRICS) {
		pools = policy_pools_json(h->srv->policy);
		grants = policy_grants_json(h->srv->policy);
		text = metrics_exposition(pools, grants);
		json_decref(pools);
		json_decref(grants);
	}
	metrics_inc("http_requests", "code", r.status == 200 ? "200" :
	    r.status == 503 ? "503" : r.status == 404 ? "404" :
	    r.status == 405 ? "405" : "other");
	out = evhttp_request_get_output_headers(req);
	if (evhttp_add_header(out, "Content-Type", r.content_type) != 0 ||
	    evhttp_add_header(out, "Cache-Control", "no-store") != 0 ||
	    (r.allow != NULL && evhttp_add_header(out, "Allow", r.allow) !=
	    0) || (buf = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		goto out;
	}
	if (r.head) {
		/* evhttp adds no length to a HEAD answer; say the GET's. */
		snprintf(len, sizeof len, "%zu",
		    strlen(text != NULL ? text : r.body));
		if (evhttp_add_header(out, "Content-Length", len) != 0) {
			evbuffer_free(buf);
			evhttp_send_error(req, 500, NULL);
			goto out;
		}
	} else if (evbuffer_add(buf, text != NULL ? text : r.body,
	    strlen(text != NULL ? text : r.body)) != 0) {
		evbuffer_free(buf);
		evhttp_send_error(req, 500, NULL);
		goto out;
	}
	evhttp_send_reply(req, r.status, r.reason, buf);
	evbuffer_free(buf);
out:
	free(text);
	httpreq_reply_clear(&r);
}

static void
beat_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http	*h = arg;

	h->beat = clock_mono_ms();
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct http	*h = arg;

	if (h->bound != NULL)
		evconnlistener_enable(evhttp_bound_socket_get_listener(
		    h->bound));
	if (h->pending != NULL)
		evconnlistener_enable(evhttp_bound_socket_get_listener(
		    h->pending));
}

/* accept failed (out of descriptors): pause, or the loop would spin. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct http	*h = arg;
	struct timeval	 tv = { HTTP_ACCEPT_PAUSE_SEC, 0 };

	metrics_inc("errors", "kind", "http_limit");
	log_warn("http: accept");
	evconnlistener_disable(l);
	if (evtimer_add(h->ev_resume, &tv) != 0)
		evconnlistener_enable(l);
}

/*
 * A listening socket on endpoint, made here rather than by evhttp: an
 * empty host is every IPv6 and IPv4 address, as Go's ":port" is, and the
 * error says which address failed and why.
 */
static int
http_listen(struct http *h, const char *endpoint,
    struct evhttp_bound_socket **out, char **cause)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	char			 host[CONFIG_ENDPOINT_HOST_MAX], *why = NULL;
	unsigned		 port;
	socklen_t		 len;
	int			 fd = -1, on = 1, off = 0, v6;

	*out = NULL;
	if (config_endpoint_parse(endpoint, host, &port, &why) != 0) {
		xasprintf(cause, "instrumentation.httpEndpoint: %s", why);
		free(why);
		return (-EINVAL);
	}
	v6 = host[0] == '\0' || strchr(host, ':') != NULL;
	for (;;) {
		memset(&ss, 0, sizeof ss);
		if (v6) {
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)port);
			sin6->sin6_addr = in6addr_any;
			if (host[0] != '\0' &&
			    inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
				goto fail;
			len = sizeof *sin6;
		} else {
			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)port);
			sin->sin_addr.s_addr = htonl(INADDR_ANY);
			if (host[0] != '\0' &&
			    inet_pton(AF_INET, host, &sin->sin_addr) != 1)
				goto fail;
			len = sizeof *sin;
		}
		fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0);
		/* Every address on a host without IPv6: IPv4's. */
		if (fd == -1 && v6 && host[0] == '\0' &&
		    errno == EAFNOSUPPORT) {
			v6 = 0;
			continue;
		}
		break;
	}
	if (fd == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
	    (v6 && host[0] == '\0' && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &off, sizeof off) != 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) != 0 ||
	    listen(fd, HTTP_BACKLOG) != 0)
		goto fail;
	if ((*out = evhttp_accept_socket_with_handle(h->evh, fd)) == NULL)
		goto fail;
	evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(*out),
	    accept_error_cb);
	return (0);
fail:
	xasprintf(cause, "instrumentation.httpEndpoint: cannot listen on "
	    "%s: %s", endpoint, strerror(errno));
	if (fd != -1)
		close(fd);
	return (-EIO);
}

/* The heartbeat runs while there is an endpoint to ask it. */
static void
http_beat(struct http *h)
{
	struct timeval	tv;
	uint64_t	ms;

	h->beat = clock_mono_ms();
	if (h->bound == NULL) {
		evtimer_del(h->ev_beat);
		return;
	}
	ms = h->live_ms / 4 < HTTP_BEAT_MS ? h->live_ms / 4 : HTTP_BEAT_MS;
	if (ms == 0)
		ms = 1;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	if (event_add(h->ev_beat, &tv) != 0)
		log_warnx("http: cannot arm the heartbeat");
}

int
http_new(struct server *srv, const struct config *cfg, struct http **out,
    char **cause)
{
	struct event_base	*base = srv->base;
	struct http		*h;
	uint64_t		 usec;

	*out = NULL;
	h = xcalloc(1, sizeof *h);
	h->srv = srv;
	TAILQ_INIT(&h->conns);
	h->endpoint = xstrdup("");
	usec = sd_watchdog_usec();
	h->live_ms = usec > 0 ? usec / 1000 : HTTP_LIVE_DEFAULT_MS;
	if ((h->evh = evhttp_new(base)) == NULL ||
	    (h->ev_beat = event_new(base, -1, EV_PERSIST, beat_cb, h)) ==
	    NULL ||
	    (h->ev_hook = event_new(base, -1, 0, hook_cb, h)) == NULL ||
	    (h->ev_resume = evtimer_new(base, resume_cb, h)) == NULL) {
		http_free(h);
		xasprintf(cause, "cannot create the HTTP endpoint");
		return (-ENOMEM);
	}
	evhttp_set_timeout(h->evh, HTTP_TIMEOUT_SEC);
	evhttp_set_max_headers_size(h->evh, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->evh, HTTP_MAX_BODY);
	/* Every method reaches us, so that others get 405 with Allow
	 * rather than evhttp's 501. */
	evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_PATCH);
	evhttp_set_bevcb(h->evh, bev_cb, h);
	evhttp_set_gencb(h->evh, request_cb, h);
	if (http_prepare(h, cfg, cause) != 0) {
		http_free(h);
		return (-EIO);
	}
	http_commit(h, cfg);
	*out = h;
	return (0);
}

void
http_free(struct http *h)
{
	if (h == NULL)
		return;
	/* Connections not hooked yet hold a reference of ours. */
	if (h->ev_hook != NULL && h->nunhooked > 0)
		hook_cb(-1, 0, h);
	if (h->evh != NULL)
		evhttp_free(h->evh);	/* their close callbacks free them */
	while (!TAILQ_EMPTY(&h->conns))
		conn_gone(TAILQ_FIRST(&h->conns));
	if (h->ev_beat != NULL)
		event_free(h->ev_beat);
	if (h->ev_hook != NULL)
		event_free(h->ev_hook);
	if (h->ev_resume != NULL)
		event_free(h->ev_resume);
	free(h->endpoint);
	free(h);
}

int
http_prepare(struct http *h, const struct config *cfg, char **cause)
{
	const char	*want = cfg->http_endpoint;

	http_abort(h);
	if (strcmp(want, h->endpoint) == 0 || want[0] == '\0')
		return (0);
	return (http_listen(h, want, &h->pending, cause));
}

void
http_commit(struct http *h, const struct config *cfg)
{
	const char	*want = cfg->http_endpoint;

	h->metrics = cfg->prometheus_export;
	if (strcmp(want, h->endpoint) == 0)
		return;
	if (h->bound != NULL)
		evhttp_del_accept_socket(h->evh, h->bound);
	h->bound = h->pending;
	h->pending = NULL;
	free(h->endpoint);
	h->endpoint = xstrdup(want);
	if (h->bound != NULL)
		log_info("HTTP endpoint listening on %s%s", want,
		    h->metrics ? " with /metrics" : "");
	else
		log_info("HTTP endpoint closed");
	http_beat(h);
}

void
http_abort(struct http *h)
{
	if (h->pending != NULL)
		evhttp_del_accept_socket(h->evh, h->pending);
	h->pending = NULL;
}
