/*
 * nrt.c owns the publication of the node's NodeResourceTopology object
 * (SPEC R-NRT): a chain of API requests that reads the object (GET),
 * creates it when absent (POST) or replaces it with the resourceVersion
 * just read (PUT; a conflict reads it again), and skips the write when the
 * server already holds the same content. One chain runs at a time; a
 * change while it runs starts another when it ends, and the content is
 * asked for only when a body is about to be sent, so the newest one wins.
 * Changes are debounced, a timer refreshes the object, and a failed chain
 * is tried again after a doubling delay. Nothing here waits.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <jansson.h>

#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "nrt.h"
#include "xmalloc.h"

#define NRT_PATH		"/apis/topology.node.k8s.io/v1alpha2/" \
				"noderesourcetopologies"
#define NRT_API_VERSION		"topology.node.k8s.io/v1alpha2"
#define NRT_KIND		"NodeResourceTopology"
#define NRT_BACKOFF_MS		500	/* first delay after a failure */
#define NRT_MAX_BACKOFF_MS	30000
#define NRT_MAX_CONFLICTS	5	/* re-reads in one chain */

struct nrt {
	struct event_base	*base;
	struct kube		*kube;
	char			*node;
	char			*path;		/* the object's own path */
	int			 debounce_ms;
	nrt_content_cb		 content;
	void			*arg;

	int			 enabled;
	int			 refresh_s;
	struct event		 debounce;	/* after nrt_changed() */
	struct event		 refresh;	/* every refresh_s */
	struct event		 kick;		/* start a chain: now or after
						   the backoff */
	int			 backoff_ms;	/* 0 after a success */

	int			 running;	/* a chain is under way */
	struct kube_request	*req;		/* its request, NULL if none */
	int			 again;		/* publish when the chain ends */
	int			 conflicts;

	int			 published;
	time_t			 last_published;
	unsigned long		 updates;	/* objects written */
	char			*last_error;
};

static void	nrt_start(struct nrt *);
static void	nrt_get_cb(void *, int, json_t *, const char *);

static void
nrt_kick_in(struct nrt *n, int ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(&n->kick, &tv);
}

/* Publish as soon as possible: now, after the running chain or after the
 * backoff of a failed one. */
static void
nrt_publish(struct nrt *n)
{
	if (!n->enabled)
		return;
	if (n->running || evtimer_pending(&n->kick, NULL)) {
		n->again = 1;
		return;
	}
	nrt_kick_in(n, 0);
}

static void
nrt_end(struct nrt *n, int ok)
{
	n->req = NULL;
	n->running = 0;
	n->conflicts = 0;
	if (!n->enabled)
		return;
	if (ok) {
		n->backoff_ms = 0;
		n->published = 1;
		n->last_published = time(NULL);
		if (n->again) {
			n->again = 0;
			nrt_kick_in(n, 0);
		}
		return;
	}
	/* The retry publishes the newest content: nothing else is owed. */
	n->again = 0;
	if (n->backoff_ms <= 0)
		n->backoff_ms = NRT_BACKOFF_MS;
	else
		n->backoff_ms *= 2;
	/* Never later than the refresh would have tried anyway. */
	if (n->backoff_ms > NRT_MAX_BACKOFF_MS)
		n->backoff_ms = NRT_MAX_BACKOFF_MS;
	if (n->backoff_ms > n->refresh_s * 1000)
		n->backoff_ms = n->refresh_s * 1000;
	nrt_kick_in(n, n->backoff_ms);
}

static void
nrt_fail(struct nrt *n, const char *fmt, ...)
    __attribute__((__format__(__printf__, 2, 3)));

static void
nrt_fail(struct nrt *n, const char *fmt, ...)
{
	va_list	ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatalx("%s: out of memory", __func__);
	va_end(ap);
	log_warnx("nrt: %s", msg);
	metrics_inc("errors", "kind", "nrt");
	free(n->last_error);
	n->last_error = msg;
	nrt_end(n, 0);
}

/* The whole object around the content, NULL if the content is unusable. */
static json_t *
nrt_object(struct nrt *n, json_t *content, const char *rv)
{
	json_t	*obj, *meta;

	if (!json_is_object(content) ||
	    !json_is_array(json_object_get(content, "zones")))
		return (NULL);
	meta = json_pack("{s:s}", "name", n->node);
	if (rv != NULL)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	obj = json_pack("{s:s, s:s, s:o}", "apiVersion", NRT_API_VERSION,
	    "kind", NRT_KIND, "metadata", meta);
	json_object_update_missing(obj, content);
	return (obj);
}

/* Whether the server's object already says what content says. */
static int
nrt_same(json_t *have, json_t *content)
{
	const char	*keys[] = { "attributes", "zones" };
	json_t		*a, *b;
	size_t		 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		a = json_object_get(have, keys[i]);
		b = json_object_get(content, keys[i]);
		if (a == NULL && b == NULL)
			continue;
		if (a == NULL || b == NULL || !json_equal(a, b))
			return (0);
	}
	return (1);
}

static void
nrt_write_cb(void *arg, int status, json_t *body, const char *error)
{
	struct nrt	*n = arg;

	(void)body;
	n->req = NULL;
	if (!n->enabled) {
		nrt_end(n, 0);
		return;
	}
	if (status == 200 || status == 201) {
		n->updates++;
		if (status == 201)
			log_info("nrt: created NodeResourceTopology %s", n->node);
		else
			log_debug("nrt: updated NodeResourceTopology %s", n->node);
		nrt_end(n, 1);
		return;
	}
	/* Changed or created behind our back: read it again. */
	if (status == 409 && ++n->conflicts <= NRT_MAX_CONFLICTS) {
		log_debug("nrt: conflict, reading %s again", n->node);
		n->req = kube_request(n->kube, "GET", n->path, NULL, nrt_get_cb,
		    n);
		return;
	}
	nrt_fail(n, "writing NodeResourceTopology %s: %s", n->node,
	    error ? error : "no answer");
}

static void
nrt_get_cb(void *arg, int status, json_t *body, const char *error)
{
	struct nrt	*n = arg;
	json_t		*content, *obj;
	const char	*method, *path, *rv = NULL;

	n->req = NULL;
	if (!n->enabled) {
		nrt_end(n, 0);
		return;
	}
	if (status == 200 && body != NULL) {
		rv = json_string_value(json_object_get(json_object_get(body,
		    "metadata"), "resourceVersion"));
		if (rv == NULL) {
			nrt_fail(n, "NodeResourceTopology %s has no "
			    "resourceVersion", n->node);
			return;
		}
	} else if (status != 404) {
		nrt_fail(n, "reading NodeResourceTopology %s: %s", n->node,
		    error ? error : "no answer");
		return;
	}

	content = n->content(n->arg);
	if (status == 200 && nrt_same(body, content)) {
		json_decref(content);
		nrt_end(n, 1);
		return;
	}
	if ((obj = nrt_object(n, content, rv)) == NULL) {
		json_decref(content);
		nrt_fail(n, "no content for NodeResourceTopology %s", n->node);
		return;
	}
	json_decref(content);
	method = status == 200 ? "PUT" : "POST";
	path = status == 200 ? n->path : NRT_PATH;
	n->req = kube_request(n->kube, method, path, obj, nrt_write_cb, n);
	json_decref(obj);
}

static void
nrt_start(struct nrt *n)
{
	if (!n->enabled || n->running)
		return;
	n->running = 1;
	n->again = 0;
	n->conflicts = 0;
	n->req = kube_request(n->kube, "GET", n->path, NULL, nrt_get_cb, n);
}

static void
nrt_kick_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	nrt_start(arg);
}

static void
nrt_debounce_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	nrt_publish(arg);
}

static void
nrt_refresh_cb(evutil_socket_t fd, short events, void *arg)
{
	(void)fd;
	(void)events;
	nrt_publish(arg);
}

struct nrt *
nrt_new(struct event_base *base, struct kube *kube, const char *node,
    int debounce_ms, nrt_content_cb content, void *arg)
{
	struct nrt	*n;
	char		*esc;

	n = xcalloc(1, sizeof *n);
	n->base = base;
	n->kube = kube;
	n->node = xstrdup(node);
	esc = kube_escape(node);
	xasprintf(&n->path, "%s/%s", NRT_PATH, esc);
	free(esc);
	n->debounce_ms = debounce_ms < 0 ? 0 : debounce_ms;
	n->content = content;
	n->arg = arg;
	evtimer_assign(&n->debounce, base, nrt_debounce_cb, n);
	event_assign(&n->refresh, base, -1, EV_PERSIST, nrt_refresh_cb, n);
	evtimer_assign(&n->kick, base, nrt_kick_cb, n);
	return (n);
}

void
nrt_free(struct nrt *n)
{
	if (n == NULL)
		return;
	if (n->req != NULL)
		kube_cancel(n->req);
	evtimer_del(&n->debounce);
	evtimer_del(&n->refresh);
	evtimer_del(&n->kick);
	free(n->node);
	free(n->path);
	free(n->last_error);
	free(n);
}

void
nrt_configure(struct nrt *n, int enabled, int refresh_seconds)
{
	struct timeval	tv;
	int		 was = n->enabled;

	if (!enabled) {
		if (was)
			log_info("nrt: NodeResourceTopology updates stopped");
		n->enabled = 0;
		n->again = 0;
		n->backoff_ms = 0;
		/* A request that could not start still calls back: it ends
		 * the chain then. */
		if (n->req != NULL) {
			kube_cancel(n->req);
			n->req = NULL;
			n->running = 0;
		}
		evtimer_del(&n->debounce);
		evtimer_del(&n->refresh);
		evtimer_del(&n->kick);
		return;
	}
	n->enabled = 1;
	if (!was || refresh_seconds != n->refresh_s ||
	    !evtimer_pending(&n->refresh, NULL)) {
		n->refresh_s = refresh_seconds > 0 ? refresh_seconds : 1;
		tv.tv_sec = n->refresh_s;
		tv.tv_usec = 0;
		evtimer_add(&n->refresh, &tv);
	}
	if (!was)
		nrt_publish(n);
}

void
nrt_changed(struct nrt *n)
{
	struct timeval	tv;

	if (n == NULL || !n->enabled)
		return;
	/*
	 * The window opens at the first change and is not pushed back by
	 * later ones: a steady stream of changes must not starve it.
	 */
	if (evtimer_pending(&n->debounce, NULL))
		return;
	tv.tv_sec = n->debounce_ms / 1000;
	tv.tv_usec = (n->debounce_ms % 1000) * 1000;
	evtimer_add(&n->debounce, &tv);
}

json_t *
nrt_status(const struct nrt *n)
{
	return (json_pack("{s:b, s:b, s:o, s:I, s:o}",
	    "enabled", n->enabled, "published", n->published,
	    "lastPublished", n->last_published ?
	    json_integer((json_int_t)n->last_published) : json_null(),
	    "updates", (json_int_t)n->updates,
	    "lastError", n->last_error ? json_string(n->last_error) :
	    json_null()));
}
