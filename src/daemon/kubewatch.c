/*
 * kubewatch.c owns list-then-watch (kube.h): the list is an ordinary
 * request (kube_request, whole body, per-attempt timeout); the watch is a
 * streaming GET ?watch=1 on the watch multi handle of kube.c, with no
 * whole-request timeout (a connect timeout and TCP keepalive instead),
 * its body fed to watchev as it arrives.
 *
 * Nothing calls back from inside curl: the decoder's events wait in the
 * watch's queue until curl returns (kube_watch_after), and a watch freed
 * while a callback runs is only marked dead and freed on the next loop
 * pass, so no caller ever frees what is on the stack below it.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <jansson.h>

#include "kube.h"
#include "kube_priv.h"
#include "log.h"
#include "watchev.h"
#include "xmalloc.h"

/* The body of a refused watch is kept this far, for its Status message. */
#define KUBE_WATCH_ERRBODY	65536
/* A stream silent this much longer than the timeout it asked for is dead. */
#define KUBE_WATCH_SILENCE	60

struct kube_watch {
	struct kube		*kube;
	TAILQ_ENTRY(kube_watch)	 entry;
	char			*path;
	char			*query;
	kube_watch_cb		 cb;
	void			*arg;

	/* The next list or watch, after its delay; the reaping when dead. */
	struct event		 timer;
	int			 relist;
	struct kube_request	*list;

	/* The stream in progress. */
	CURL			*easy;
	struct curl_slist	*headers;
	char			 errbuf[CURL_ERROR_SIZE];
	char			*url;
	struct watchev		*dec;
	json_t			*pending;	/* [[event, object]...] */
	char			*errbody;
	size_t			 errlen;
	long			 code;
	int			 got;		/* events, bookmarks */
	int			 streams;	/* since the last list */

	char			*rv;
	int			 listed;
	int			 lists;
	int			 watching;
	int			 fails;		/* since the last good event */
	int			 dead;
	int			 delivering;
	unsigned long long	 relists;
	unsigned long long	 reconnects;
	unsigned long long	 events;
	unsigned long long	 bookmarks;
	char			*last_error;
};

static void	kube_watch_next(struct kube_watch *, int);
static void	kube_watch_stream(struct kube_watch *);

static const char *const kube_watch_events[] = {
	"LIST", "ADDED", "MODIFIED", "DELETED", "ERROR"
};

const char *
kube_watch_event_name(enum kube_watch_event ev)
{
	if ((size_t)ev >= sizeof kube_watch_events /
	    sizeof kube_watch_events[0])
		return ("?");
	return (kube_watch_events[ev]);
}

/* Calls the user back; -1 when the watch was freed meanwhile. */
static int
kube_watch_call(struct kube_watch *w, enum kube_watch_event ev, json_t *obj,
    const char *error)
{
	struct kube	*k = w->kube;

	if (w->dead)
		return (-1);
	k->busy++;
	w->delivering++;
	w->cb(w->arg, ev, obj, error);
	w->delivering--;
	k->busy--;
	return (w->dead ? -1 : 0);
}

static void
kube_watch_end_stream(struct kube_watch *w)
{
	if (w->easy != NULL) {
		curl_multi_remove_handle(w->kube->watch.multi, w->easy);
		curl_easy_cleanup(w->easy);
		w->easy = NULL;
	}
	curl_slist_free_all(w->headers);
	w->headers = NULL;
	watchev_free(w->dec);
	w->dec = NULL;
	json_array_clear(w->pending);
	free(w->errbody);
	w->errbody = NULL;
	w->errlen = 0;
	free(w->url);
	w->url = NULL;
	w->watching = 0;
}

static void
kube_watch_destroy(struct kube_watch *w)
{
	TAILQ_REMOVE(&w->kube->watches, w, entry);
	kube_cancel(w->list);
	kube_watch_end_stream(w);
	event_del(&w->timer);
	json_decref(w->pending);
	free(w->path);
	free(w->query);
	free(w->rv);
	free(w->last_error);
	free(w);
}

static void
kube_watch_set_error(struct kube_watch *w, const char *error)
{
	free(w->last_error);
	w->last_error = xstrdup(error);
}

/* A failure: reported, then the same step again after the backoff. The
 * list's own failures were counted by kube_request already. */
static void
kube_watch_failed(struct kube_watch *w, const char *error, int count)
{
	char	*what;

	kube_watch_set_error(w, error);
	if (count)
		kube_note_failure(w->kube, error);
	what = log_escape(error, 300);
	log_debug("kube: watch %s: %s", w->path, what);
	free(what);
	if (kube_watch_call(w, KUBE_WATCH_ERROR, NULL, error) != 0)
		return;
	w->fails++;
	kube_watch_next(w, kube_backoff(w->kube, w->fails));
}

static void
kube_watch_listed(void *arg, int status, json_t *body, const char *error)
{
	struct kube_watch	*w = arg;
	json_t			*items, *rv;
	char			*why = NULL;

	w->list = NULL;
	items = json_object_get(body, "items");
	rv = json_object_get(json_object_get(body, "metadata"),
	    "resourceVersion");
	if (error != NULL)
		xasprintf(&why, "list %s: %s", w->path, error);
	else if (status != 200)
		xasprintf(&why, "list %s: HTTP %d", w->path, status);
	else if (!json_is_array(items) && !json_is_null(items) &&
	    items != NULL)
		xasprintf(&why, "list %s: items is not an array", w->path);
	else if (!json_is_string(rv) || json_string_length(rv) == 0)
		xasprintf(&why, "list %s: no metadata.resourceVersion",
		    w->path);
	if (why != NULL) {
		kube_watch_failed(w, why, 0);
		free(why);
		return;
	}
	free(w->rv);
	w->rv = xstrdup(json_string_value(rv));
	if (w->lists++ > 0)
		w->relists++;
	w->listed = 1;
	w->relist = 0;
	w->streams = 0;
	if (!json_is_array(items))
		items = json_array();
	else
		json_incref(items);
	if (kube_watch_call(w, KUBE_WATCH_LIST, items, NULL) != 0) {
		json_decref(items);
		return;
	}
	json_decref(items);
	kube_watch_stream(w);
}

static void
kube_watch_list(struct kube_watch *w)
{
	char	*p;

	if (w->query != NULL)
		xasprintf(&p, "%s?%s", w->path, w->query);
	else
		p = xstrdup(w->path);
	w->list = kube_request(w->kube, "GET", p, NULL, kube_watch_listed, w);
	free(p);
	/* Only a bad method or path is refused at once: not ours. */
	if (w->list == NULL)
		fatalx("kube: cannot list %s", w->path);
}

static void
kube_watch_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct kube_watch	*w = arg;

	if (w->dead)
		kube_watch_destroy(w);
	else if (w->relist)
		kube_watch_list(w);
	else
		kube_watch_stream(w);
}

static void
kube_watch_next(struct kube_watch *w, int delay_ms)
{
	struct timeval	tv;

	tv.tv_sec = delay_ms / 1000;
	tv.tv_usec = (delay_ms % 1000) * 1000;
	evtimer_add(&w->timer, &tv);
}

/* The decoder's events wait until curl has returned. */
static int
kube_watch_decoded(void *arg, enum watchev_type t, json_t *obj)
{
	struct kube_watch	*w = arg;

	json_array_append_new(w->pending, json_pack("[i, O]", (int)t, obj));
	return (0);
}

static size_t
kube_watch_write(char *data, size_t size, size_t n, void *arg)
{
	struct kube_watch	*w = arg;
	size_t			 len = size * n, keep;

	if (w->dead)
		return (0);
	if (w->code == 0)
		curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->code);
	if (w->code != 200) {
		keep = KUBE_WATCH_ERRBODY - w->errlen;
		if (keep > len)
			keep = len;
		w->errbody = xreallocarray(w->errbody, 1, w->errlen + keep + 1);
		memcpy(w->errbody + w->errlen, data, keep);
		w->errlen += keep;
		w->errbody[w->errlen] = '\0';
		return (len);
	}
	/* A short count makes curl end the transfer (CURLE_WRITE_ERROR). */
	if (watchev_feed(w->dec, data, len) != 0)
		return (0);
	return (len);
}

static size_t
kube_watch_header(char *data, size_t size, size_t n, void *arg)
{
	struct kube_watch	*w = arg;
	size_t			 len = size * n;
	long			 code = 0;

	/* The empty line after the headers: the answer has begun. */
	if (len <= 2 && (len == 0 || data[0] == '\r' || data[0] == '\n')) {
		curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &code);
		if (code == 200)
			w->watching = 1;
	}
	return (len);
}

static void
kube_watch_stream(struct kube_watch *w)
{
	struct kube	*k = w->kube;
	CURLMcode	 mc;
	char		*rv, *cause = NULL, *why;
	unsigned int	 seconds;

	kube_watch_end_stream(w);
	rv = kube_escape(w->rv);
	seconds = KUBE_WATCH_SECONDS + arc4random_uniform(KUBE_WATCH_SECONDS);
	xasprintf(&w->url, "%s%s?%s%swatch=1&allowWatchBookmarks=true&"
	    "resourceVersion=%s&timeoutSeconds=%u", k->cfg->server, w->path,
	    w->query != NULL ? w->query : "", w->query != NULL ? "&" : "",
	    rv, seconds);
	free(rv);
	w->dec = watchev_new(kube_watch_decoded, w);
	w->code = 0;
	w->got = 0;
	w->errbuf[0] = '\0';
	if (w->streams++ > 0)
		w->reconnects++;
	if (kube_easy_new(k, w->url, &w->headers, w->errbuf, &w->easy,
	    &cause) != 0) {
		xasprintf(&why, "watch %s: %s", w->url, cause);
		free(cause);
		kube_watch_end_stream(w);
		kube_watch_failed(w, why, 1);
		free(why);
		return;
	}
	curl_easy_setopt(w->easy, CURLOPT_PRIVATE, w);
	curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, kube_watch_write);
	curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->easy, CURLOPT_HEADERFUNCTION, kube_watch_header);
	curl_easy_setopt(w->easy, CURLOPT_HEADERDATA, w);
	/* No whole-request timeout: a dead peer is found by keepalive, a
	 * silent one by the low-speed limit past the asked-for timeout. */
	curl_easy_setopt(w->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(w->easy, CURLOPT_TCP_KEEPIDLE, 30L);
	curl_easy_setopt(w->easy, CURLOPT_TCP_KEEPINTVL, 10L);
	curl_easy_setopt(w->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(w->easy, CURLOPT_LOW_SPEED_TIME,
	    (long)(seconds + KUBE_WATCH_SILENCE));
	if ((mc = curl_multi_add_handle(k->watch.multi, w->easy)) != CURLM_OK) {
		curl_easy_cleanup(w->easy);
		w->easy = NULL;
		xasprintf(&why, "watch %s: %s", w->url,
		    curl_multi_strerror(mc));
		kube_watch_end_stream(w);
		kube_watch_failed(w, why, 1);
		free(why);
	}
}

/* The events of one watch's queue, in order; the callbacks may free it. */
static void
kube_watch_flush(struct kube_watch *w)
{
	json_t		*pending, *item, *obj, *rv;
	size_t		 i;
	int		 t;

	pending = w->pending;
	w->pending = json_array();
	json_array_foreach(pending, i, item) {
		t = (int)json_integer_value(json_array_get(item, 0));
		obj = json_array_get(item, 1);
		rv = json_object_get(json_object_get(obj, "metadata"),
		    "resourceVersion");
		free(w->rv);
		w->rv = xstrdup(json_string_value(rv));
		w->got = 1;
		w->fails = 0;
		if (t == WATCHEV_BOOKMARK) {
			w->bookmarks++;
			continue;
		}
		w->events++;
		if (kube_watch_call(w, t == WATCHEV_ADDED ? KUBE_WATCH_ADDED :
		    t == WATCHEV_MODIFIED ? KUBE_WATCH_MODIFIED :
		    KUBE_WATCH_DELETED, obj, NULL) != 0)
			break;
	}
	json_decref(pending);
}

void
kube_watch_after(struct kube *k)
{
	struct kube_watch	*w;

	/* Frees wait while busy: the list stays as it is under us. */
	k->busy++;
	TAILQ_FOREACH(w, &k->watches, entry) {
		if (!w->dead && json_array_size(w->pending) > 0)
			kube_watch_flush(w);
	}
	k->busy--;
}

void
kube_watch_done(struct kube *k, CURL *easy, CURLcode rc)
{
	struct kube_watch	*w = NULL;
	enum watchev_error	 derr;
	char			*why = NULL, *msg;
	long			 code = 0;
	int			 gone, delay;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, &w);
	if (w == NULL || w->easy != easy)
		return;
	k->busy++;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(k->watch.multi, easy);
	curl_easy_cleanup(easy);
	w->easy = NULL;
	w->watching = 0;
	if (w->dead)
		goto out;
	derr = watchev_error(w->dec);
	gone = (derr == WATCHEV_ESTATUS && watchev_status_code(w->dec) ==
	    410) || (rc == CURLE_OK && code == 410);
	if (gone) {
		/* The server forgot our version: list again; at once the
		 * first time, else after the backoff, never in a loop. */
		xasprintf(&why, "watch %s: 410 Gone: listing again", w->path);
		kube_watch_set_error(w, why);
		log_debug("kube: %s", why);
		delay = w->fails == 0 ? 0 : kube_backoff(k, w->fails);
		w->fails++;
		w->relist = 1;
		w->listed = 0;
		kube_watch_end_stream(w);
		kube_watch_next(w, delay);
		goto out;
	}
	if (derr != WATCHEV_OK)
		xasprintf(&why, "watch %s: %s", w->url, watchev_cause(w->dec));
	else if (rc != CURLE_OK)
		xasprintf(&why, "watch %s: %s", w->url, w->errbuf[0] != '\0' ?
		    w->errbuf : curl_easy_strerror(rc));
	else if (code != 200) {
		msg = kube_status_message(w->errbody, w->errlen);
		xasprintf(&why, "watch %s: HTTP %ld%s%s", w->url, code,
		    msg != NULL ? ": " : "", msg != NULL ? msg : "");
		free(msg);
	} else if (!watchev_idle(w->dec))
		xasprintf(&why, "watch %s: the stream ended inside an event",
		    w->url);
	kube_watch_end_stream(w);
	if (why != NULL)
		kube_watch_failed(w, why, 1);
	else if (w->got)
		kube_watch_next(w, 0);
	else {
		/* An empty stream: again, but never in a tight loop. */
		w->fails++;
		kube_watch_next(w, kube_backoff(k, w->fails));
	}
out:
	free(why);
	k->busy--;
}

struct kube_watch *
kube_watch_new(struct kube *k, const char *path, const char *query,
    kube_watch_cb cb, void *arg)
{
	struct kube_watch	*w;

	if (path == NULL || path[0] != '/')
		return (NULL);
	w = xcalloc(1, sizeof *w);
	w->kube = k;
	w->path = xstrdup(path);
	w->query = query != NULL && *query != '\0' ? xstrdup(query) : NULL;
	w->cb = cb;
	w->arg = arg;
	w->pending = json_array();
	w->relist = 1;
	evtimer_assign(&w->timer, k->base, kube_watch_timer_cb, w);
	TAILQ_INSERT_TAIL(&k->watches, w, entry);
	/* Start on the loop so the callback can never run in here. */
	kube_watch_next(w, 0);
	return (w);
}

void
kube_watch_free(struct kube_watch *w)
{
	if (w == NULL || w->dead)
		return;
	if (w->kube->busy > 0 || w->delivering > 0) {
		/* Inside a callback: freed on the next loop pass. */
		w->dead = 1;
		kube_cancel(w->list);
		w->list = NULL;
		event_del(&w->timer);
		kube_watch_next(w, 0);
		return;
	}
	kube_watch_destroy(w);
}

void
kube_watch_free_all(struct kube *k)
{
	struct kube_watch	*w;

	while ((w = TAILQ_FIRST(&k->watches)) != NULL)
		kube_watch_destroy(w);
}

int
kube_watch_count(const struct kube *k)
{
	const struct kube_watch	*w;
	int			 n = 0;

	TAILQ_FOREACH(w, &k->watches, entry) {
		if (!w->dead)
			n++;
	}
	return (n);
}

json_t *
kube_watch_status(const struct kube_watch *w)
{
	return (json_pack("{s:s, s:s?, s:s?, s:b, s:b, s:I, s:I, s:I, s:I, "
	    "s:s?}",
	    "path", w->path,
	    "query", w->query,
	    "resourceVersion", w->rv,
	    "listed", w->listed,
	    "watching", w->watching,
	    "relists", (json_int_t)w->relists,
	    "reconnects", (json_int_t)w->reconnects,
	    "events", (json_int_t)w->events,
	    "bookmarks", (json_int_t)w->bookmarks,
	    "lastError", w->last_error));
}
