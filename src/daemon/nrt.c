/*
 * nrt.c owns the publication of the node's NodeResourceTopology object
 * (SPEC R-NRT): a chain of API requests that reads the object (GET),
 * creates it when absent (POST) or replaces it with the resourceVersion
 * just read (PUT; a conflict reads it again), and skips the write when the
 * server already holds the same content. The resourceVersion of the last
 * read or write is kept, with the text of the content the server then held
 * as we sent or found it: a change is written against it at once, without
 * reading the object first, and content that did not change is not
 * written. A write's answer, the whole object, is read for its
 * resourceVersion alone. The timer's refresh reads the object, to see
 * what others did. One chain runs at a time; a change while it runs
 * starts another when it ends, and the content is asked for only when a
 * body is about to be sent, so the newest one wins.
 * Changes are debounced, a timer refreshes the object, and a failed chain
 * is tried again after a doubling delay. Nothing here waits.
 */
#include "autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int			 verify;	/* the next chain reads first */
	/* After our last read or write: the object's resourceVersion and
	 * the text of its content (nrt_text), NULL when not known; and the
	 * text of the content a write under way sends. A text, not a tree:
	 * kept as jansson's tree, a 448-CPU machine's object added 100 KiB
	 * to the idle daemon's memory. */
	char			*held_rv;
	char			*held_text;
	char			*sending;

	int			 published;
	time_t			 last_published;
	unsigned long		 updates;	/* objects written */
	char			*last_error;
};

static void	nrt_start(struct nrt *);
static void	nrt_get_cb(void *, int, json_t *, const char *);

/* What of the object is ours to keep as we say: its text (nrt_text) is
 * what is compared with what the server holds, and what is written of
 * the content (nrt_body): a key of the content not named here is not
 * sent. */
static const char *const nrt_keys[] = { "attributes", "zones" };
#define NRT_NKEYS	(sizeof nrt_keys / sizeof nrt_keys[0])

static void
nrt_forget(struct nrt *n)
{
	free(n->held_rv);
	n->held_rv = NULL;
	free(n->held_text);
	n->held_text = NULL;
}

/* The content's nrt_keys as one canonical text; NULL when jansson
 * cannot write it. */
static char *
nrt_text(json_t *content)
{
	json_t		*o = json_object(), *v;
	char		*t;
	size_t		 i;

	for (i = 0; i < NRT_NKEYS; i++)
		if ((v = json_object_get(content, nrt_keys[i])) != NULL)
			json_object_set(o, nrt_keys[i], v);
	t = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	return (t);
}

/* Where an answer keeps the object's resourceVersion. */
static const char *const nrt_rv_path[] = { "metadata", "resourceVersion",
	NULL };

/* The server holds text at resourceVersion rv (from its answer to a read
 * or a write); nothing is kept from an answer without one. text is
 * taken. */
static void
nrt_remember(struct nrt *n, const char *rv, char *text)
{
	nrt_forget(n);
	if (rv == NULL || text == NULL) {
		free(text);
		return;
	}
	n->held_rv = xstrdup(rv);
	n->held_text = text;
}

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
	/* The retry reads the object first. */
	nrt_forget(n);
	nrt_end(n, 0);
}

/*
 * The whole object's text around the content's (nrt_text): its head
 * (apiVersion, kind, metadata) written as an object, then joined with the
 * content's members, so that the content, the bulk of it, is written out
 * once for the compare and the request both. NULL if the content is
 * unusable.
 */
static char *
nrt_body(struct nrt *n, json_t *content, const char *text, const char *rv)
{
	json_t	*meta, *head;
	char	*h, *body;
	size_t	 hl, tl;

	if (text == NULL || !json_is_object(content) ||
	    !json_is_array(json_object_get(content, "zones")))
		return (NULL);
	meta = json_pack("{s:s}", "name", n->node);
	if (rv != NULL)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	head = json_pack("{s:s, s:s, s:o}", "apiVersion", NRT_API_VERSION,
	    "kind", NRT_KIND, "metadata", meta);
	h = json_dumps(head, JSON_COMPACT);
	json_decref(head);
	if (h == NULL)
		return (NULL);
	/* "{head}" and "{content}", each with members, as "{head,content}". */
	hl = strlen(h);
	tl = strlen(text);
	if (hl < 3 || h[hl - 1] != '}' || tl < 3 || text[0] != '{') {
		free(h);
		return (NULL);
	}
	body = xmalloc(hl + tl);
	memcpy(body, h, hl - 1);
	body[hl - 1] = ',';
	memcpy(body + hl, text + 1, tl);
	free(h);
	return (body);
}

static void
nrt_write_cb(void *arg, int status, const char *rv, const char *error)
{
	struct nrt	*n = arg;

	n->req = NULL;
	if (!n->enabled) {
		nrt_end(n, 0);
		return;
	}
	if (status == 200 || status == 201) {
		nrt_remember(n, rv, n->sending);
		n->sending = NULL;
		n->updates++;
		if (status == 201)
			log_info("nrt: created NodeResourceTopology %s", n->node);
		else
			log_debug("nrt: updated NodeResourceTopology %s", n->node);
		nrt_end(n, 1);
		return;
	}
	/* Changed, created or deleted behind our back: read it again. */
	free(n->sending);
	n->sending = NULL;
	nrt_forget(n);
	if ((status == 409 || status == 404) &&
	    ++n->conflicts <= NRT_MAX_CONFLICTS) {
		log_debug("nrt: %s changed or gone (%d), reading it again",
		    n->node, status);
		n->req = kube_request(n->kube, "GET", n->path, NULL, nrt_get_cb,
		    n);
		return;
	}
	nrt_fail(n, "writing NodeResourceTopology %s: %s", n->node,
	    error ? error : "no answer");
}

/*
 * Writes the newest content over the server's object at resourceVersion
 * rv (PUT), or creates it (POST, rv NULL). Nothing is written when the
 * server holds the same content already, as nrt_remember kept it from its
 * last answer: one text compared, whether that answer was to a read or a
 * write.
 */
static void
nrt_write(struct nrt *n, const char *rv)
{
	json_t		*content;
	const char	*method, *path;
	char		*text, *body;

	content = n->content(n->arg);
	text = nrt_text(content);
	if (text != NULL && n->held_text != NULL &&
	    strcmp(text, n->held_text) == 0) {
		free(text);
		json_decref(content);
		nrt_end(n, 1);
		return;
	}
	body = nrt_body(n, content, text, rv);
	json_decref(content);
	if (body == NULL) {
		free(text);
		nrt_fail(n, "no content for NodeResourceTopology %s", n->node);
		return;
	}
	free(n->sending);
	n->sending = text;
	method = rv != NULL ? "PUT" : "POST";
	path = rv != NULL ? n->path : NRT_PATH;
	n->req = kube_request_pick(n->kube, method, path, body, nrt_rv_path,
	    nrt_write_cb, n);
}

static void
nrt_get_cb(void *arg, int status, json_t *body, const char *error)
{
	struct nrt	*n = arg;
	const char	*rv = NULL;

	n->req = NULL;
	if (!n->enabled) {
		nrt_end(n, 0);
		return;
	}
	nrt_forget(n);
	if (status == 200 && body != NULL) {
		rv = json_string_value(json_object_get(json_object_get(body,
		    "metadata"), "resourceVersion"));
		if (rv == NULL) {
			nrt_fail(n, "NodeResourceTopology %s has no "
			    "resourceVersion", n->node);
			return;
		}
		/* What the server holds: what the write compares. */
		nrt_remember(n, rv, nrt_text(body));
		nrt_write(n, rv);
	} else if (status == 404)
		nrt_write(n, NULL);
	else
		nrt_fail(n, "reading NodeResourceTopology %s: %s", n->node,
		    error ? error : "no answer");
}

static void
nrt_start(struct nrt *n)
{
	if (!n->enabled || n->running)
		return;
	n->running = 1;
	n->again = 0;
	n->conflicts = 0;
	/* A change is written against what the server answered last. */
	if (n->held_rv != NULL && !n->verify) {
		nrt_write(n, n->held_rv);
		return;
	}
	n->verify = 0;
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

/* The refresh reads the object: someone may have changed or deleted it. */
static void
nrt_refresh_cb(evutil_socket_t fd, short events, void *arg)
{
	struct nrt	*n = arg;

	(void)fd;
	(void)events;
	n->verify = 1;
	nrt_publish(n);
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
	nrt_forget(n);
	free(n->sending);
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
		/* Enabled again, it reads what others did meanwhile. */
		nrt_forget(n);
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
