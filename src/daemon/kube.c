/*
 * kube.c owns the conversation with the Kubernetes API server (SPEC
 * R-KUBE): libcurl's multi interface driven by our libevent loop (curl
 * tells us which sockets and which timeout to watch, we tell it what
 * happened), one easy handle per attempt, a timeout per attempt, retries
 * with doubling backoff for transport errors, 5xx and 429, answers capped
 * and parsed as JSON (or checked as JSON, for the one string a caller
 * picks), and the failures kept for status and metrics.
 * Watches (kubewatch.c) stream on a multi handle of their own.
 *
 * Name lookups must not block the loop: Debian's libcurl uses its threaded
 * resolver (checked at start), and the API server is usually an address.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>
#include <jansson.h>

#include "jsonpick.h"
#include "kube.h"
#include "kube_priv.h"
#include "log.h"
#include "metrics.h"
#include "xmalloc.h"

struct kube_request {
	struct kube			*kube;
	TAILQ_ENTRY(kube_request)	 entry;
	char				*method;
	char				*url;
	char				*body;
	kube_cb				 cb;
	kube_pick_cb			 pick_cb;	/* instead of cb */
	const char *const		*pick;
	void				*arg;

	CURL				*easy;
	struct curl_slist		*headers;
	char				 errbuf[CURL_ERROR_SIZE];
	char				*resp;
	size_t				 resplen;
	int				 too_large;
	int				 attempt;
	/* Backoff between attempts, then the deferred callback. */
	struct event			 timer;
	int				 finished;

	int				 status;
	char				*error;
};

struct kube_sock {
	struct kube_multi	*km;
	curl_socket_t		 fd;
	struct event		 ev;
	LIST_ENTRY(kube_sock)	 entry;
};

static void	kube_start_attempt(struct kube_request *);

/*
 * A failure is an attempt the API server did not answer usefully: no
 * answer, 5xx, 429, too large, not JSON. Other 4xx are verdicts the
 * caller acts on, not trouble with the server.
 */
void
kube_note_failure(struct kube *k, const char *what)
{
	k->nfailures++;
	free(k->last_error);
	k->last_error = xstrdup(what);
	metrics_inc("errors", "kind", "kube_api");
}

static void
kube_request_free(struct kube_request *r)
{
	if (r->easy != NULL) {
		curl_multi_remove_handle(r->kube->req.multi, r->easy);
		kube_easy_done(r->kube, r->easy);
	}
	curl_slist_free_all(r->headers);
	event_del(&r->timer);
	free(r->method);
	free(r->url);
	free(r->body);
	free(r->resp);
	free(r->error);
	free(r);
}

/* r's answer as a tree; NULL, with r->error, when it is not JSON. */
static json_t *
kube_read_tree(struct kube_request *r)
{
	json_t		*body;
	json_error_t	 jerr;
	char		*text;

	body = json_loadb(r->resp, r->resplen, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES, &jerr);
	if (body == NULL && r->error == NULL) {
		/* jansson quotes the answer near the error. */
		text = log_escape(jerr.text, 160);
		xasprintf(&r->error, "%s %s: HTTP %d: the answer is not JSON: "
		    "%s at line %d, column %d (byte %d of %zu)", r->method,
		    r->url, r->status, text, jerr.line, jerr.column,
		    jerr.position, r->resplen);
		free(text);
		kube_note_failure(r->kube, r->error);
	}
	return (body);
}

/* The string r picks from its answer; NULL, with r->error, when the
 * answer is not JSON. */
static char *
kube_read_pick(struct kube_request *r)
{
	char	*value = NULL, *cause = NULL;

	if (jsonpick(r->resp, r->resplen, r->pick, &value, &cause) != 0) {
		if (r->error == NULL) {
			xasprintf(&r->error, "%s %s: HTTP %d: the answer is "
			    "not JSON: %s (of %zu)", r->method, r->url,
			    r->status, cause, r->resplen);
			kube_note_failure(r->kube, r->error);
		}
		free(cause);
	}
	return (value);
}

static void
kube_deliver(struct kube_request *r)
{
	json_t		*body = NULL;
	char		*value = NULL;

	TAILQ_REMOVE(&r->kube->requests, r, entry);
	if (r->status != 0 && r->resplen != 0) {
		if (r->pick != NULL)
			value = kube_read_pick(r);
		else
			body = kube_read_tree(r);
	} else if (r->status / 100 == 2 && r->error == NULL &&
	    strcmp(r->method, "GET") == 0) {
		xasprintf(&r->error, "%s %s: HTTP %d: the answer is empty",
		    r->method, r->url, r->status);
		kube_note_failure(r->kube, r->error);
	}
	r->kube = NULL;		/* kube_cancel from the callback: no-op */
	/* Out of the list first: the callback may free the whole client. */
	if (r->pick != NULL)
		r->pick_cb(r->arg, r->status, value, r->error);
	else
		r->cb(r->arg, r->status, body, r->error);
	json_decref(body);
	free(value);
	kube_request_free(r);	/* no easy handle left: kube not needed */
}

static void
kube_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct kube_request	*r = arg;

	if (r->finished)
		kube_deliver(r);
	else
		kube_start_attempt(r);
}

static void
kube_finish(struct kube_request *r)
{
	struct timeval	tv = { 0, 0 };

	r->finished = 1;
	evtimer_add(&r->timer, &tv);
}

static int
kube_retryable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return (1);
	default:
		return (0);
	}
}

/* The message of a Kubernetes Status answer, if that is what came. */
char *
kube_status_message(const char *resp, size_t len)
{
	json_t		*j, *m;
	char		*out = NULL;

	if (resp == NULL || len == 0)
		return (NULL);
	if ((j = json_loadb(resp, len, 0, NULL)) == NULL)
		return (NULL);
	m = json_object_get(j, "message");
	if (json_is_string(m))
		out = log_escape(json_string_value(m), 200);
	json_decref(j);
	return (out);
}

static void
kube_attempt_done(struct kube_request *r, CURLcode rc)
{
	struct kube	*k = r->kube;
	struct timeval	 tv;
	curl_off_t	 us = 0;
	long		 code = 0;
	int		 retry = 0, delay;
	char		*msg, *what;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	/* Each attempt, answered or not: how long the API server takes. */
	if (curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME_T, &us) == CURLE_OK)
		metrics_observe("api_request", (double)us / 1e6);
	curl_multi_remove_handle(k->req.multi, r->easy);
	kube_easy_done(k, r->easy);
	r->easy = NULL;
	curl_slist_free_all(r->headers);
	r->headers = NULL;
	free(r->error);
	r->error = NULL;

	if (rc != CURLE_OK) {
		r->status = 0;
		if (r->too_large || rc == CURLE_FILESIZE_EXCEEDED)
			xasprintf(&r->error, "%s %s: answer larger than %d "
			    "bytes", r->method, r->url, KUBE_MAX_BODY);
		else {
			xasprintf(&r->error, "%s %s: %s", r->method, r->url,
			    r->errbuf[0] != '\0' ? r->errbuf :
			    curl_easy_strerror(rc));
			retry = kube_retryable(rc);
		}
	} else {
		r->status = (int)code;
		if (code >= 500 || code == 429) {
			retry = 1;
		}
		if (code >= 400) {
			msg = kube_status_message(r->resp, r->resplen);
			xasprintf(&r->error, "%s %s: HTTP %ld%s%s", r->method,
			    r->url, code, msg != NULL ? ": " : "",
			    msg != NULL ? msg : "");
			free(msg);
		}
	}
	if (r->error != NULL && (r->status == 0 || retry))
		kube_note_failure(k, r->error);
	if (retry && r->attempt <= k->opts.retries) {
		delay = kube_backoff(k, r->attempt);
		what = log_escape(r->error, 300);
		log_debug("kube: %s; attempt %d again in %d ms", what,
		    r->attempt + 1, delay);
		free(what);
		tv.tv_sec = delay / 1000;
		tv.tv_usec = (delay % 1000) * 1000;
		evtimer_add(&r->timer, &tv);
		return;
	}
	kube_finish(r);
}

int
kube_backoff(const struct kube *k, int n)
{
	int	delay, i;

	delay = k->opts.backoff_ms;
	for (i = 1; i < n && delay < KUBE_MAX_BACKOFF_MS; i++)
		delay *= 2;
	return (delay > KUBE_MAX_BACKOFF_MS ? KUBE_MAX_BACKOFF_MS : delay);
}

static void
kube_request_done(struct kube *k, CURL *easy, CURLcode rc)
{
	struct kube_request	*r = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, &r);
	if (r != NULL)
		kube_attempt_done(r, rc);
}

/* Runs curl for one socket or its timer, then what finished. */
static void
kube_multi_action(struct kube_multi *km, curl_socket_t fd, int flags)
{
	struct kube	*k = km->kube;
	CURLMsg		*m;
	CURL		*easy;
	CURLcode	 rc;
	int		 running, left;

	k->busy++;
	curl_multi_socket_action(km->multi, fd, flags, &running);
	k->busy--;
	if (km->after != NULL)
		km->after(k);
	while ((m = curl_multi_info_read(km->multi, &left)) != NULL) {
		if (m->msg != CURLMSG_DONE)
			continue;
		easy = m->easy_handle;
		rc = m->data.result;
		km->done(k, easy, rc);
	}
}

static void
kube_sock_cb(evutil_socket_t fd, short events, void *arg)
{
	struct kube_sock	*s = arg;
	int			 flags = 0;

	if (events & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (events & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	kube_multi_action(s->km, fd, flags);
}

static void
kube_curl_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	kube_multi_action(arg, CURL_SOCKET_TIMEOUT, 0);
}

/* curl's CURLMOPT_SOCKETFUNCTION: watch fd for what, or stop watching. */
static int
kube_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp,
    void *sockp)
{
	struct kube_multi	*km = userp;
	struct kube_sock	*s = sockp;
	short			 ev = EV_PERSIST;

	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			event_del(&s->ev);
			curl_multi_assign(km->multi, fd, NULL);
			LIST_REMOVE(s, entry);
			free(s);
		}
		return (0);
	}
	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->km = km;
		s->fd = fd;
		LIST_INSERT_HEAD(&km->socks, s, entry);
		curl_multi_assign(km->multi, fd, s);
	} else
		event_del(&s->ev);
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= EV_READ;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= EV_WRITE;
	event_assign(&s->ev, km->kube->base, fd, ev, kube_sock_cb, s);
	event_add(&s->ev, NULL);
	return (0);
}

/* curl's CURLMOPT_TIMERFUNCTION: only arm our timer, never act here. */
static int
kube_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct kube_multi	*km = userp;
	struct timeval		 tv;

	if (timeout_ms < 0) {
		evtimer_del(&km->timer);
		return (0);
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(&km->timer, &tv);
	return (0);
}

static size_t
kube_write(char *data, size_t size, size_t n, void *arg)
{
	struct kube_request	*r = arg;
	size_t			 len = size * n;

	if (len > KUBE_MAX_BODY - r->resplen) {
		r->too_large = 1;
		return (0);
	}
	r->resp = xreallocarray(r->resp, 1, r->resplen + len + 1);
	memcpy(r->resp + r->resplen, data, len);
	r->resplen += len;
	r->resp[r->resplen] = '\0';
	return (len);
}

/* One credential to curl: its inline bytes, or its file read now. */
static int
kube_blob(CURL *e, CURLoption opt, const char *file, const char *data,
    size_t len, const char *what, char **cause)
{
	struct curl_blob	 blob;
	char			*buf = NULL;
	int			 error;

	if (data == NULL && file == NULL)
		return (0);
	if (data == NULL) {
		if ((error = kube_config_file(file, what, &buf, &len,
		    cause)) != 0)
			return (error);
		data = buf;
	}
	blob.data = (void *)(uintptr_t)data;
	blob.len = len;
	blob.flags = CURL_BLOB_COPY;
	curl_easy_setopt(e, opt, &blob);
	if (buf != NULL) {
		explicit_bzero(buf, len);
		free(buf);
	}
	return (0);
}

int
kube_easy_new(struct kube *k, const char *url, struct curl_slist **headers,
    char *errbuf, CURL **out, char **cause)
{
	struct kube_config	*cfg = k->cfg;
	CURL			*e;
	char			*token = NULL, *h;
	int			 error;

	*out = NULL;
	if ((error = kube_config_token(cfg, &token, cause)) != 0)
		return (error);
	if (k->nidle > 0) {
		e = k->idle[--k->nidle];
		curl_easy_reset(e);
	} else if ((e = curl_easy_init()) == NULL) {
		free(token);
		xasprintf(cause, "cannot make a curl handle");
		return (-ENOMEM);
	}
	*out = e;
	*headers = curl_slist_append(*headers, "Accept: application/json");
	*headers = curl_slist_append(*headers, "Expect:");
	if (token != NULL) {
		xasprintf(&h, "Authorization: Bearer %s", token);
		*headers = curl_slist_append(*headers, h);
		explicit_bzero(h, strlen(h));
		explicit_bzero(token, strlen(token));
		free(h);
		free(token);
	}
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(e, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, *headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, PACKAGE_NAME "/"
	    PACKAGE_VERSION);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)k->opts.timeout_ms);

	if (cfg->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	/*
	 * Files are read here, not by curl, which would open them blocking
	 * on the loop. The blobs are copied by curl (CURL_BLOB_COPY).
	 */
	if ((error = kube_blob(e, CURLOPT_CAINFO_BLOB, cfg->ca_file,
	    cfg->ca_data, cfg->ca_len, "certificate-authority", cause)) != 0 ||
	    (error = kube_blob(e, CURLOPT_SSLCERT_BLOB, cfg->cert_file,
	    cfg->cert_data, cfg->cert_len, "client-certificate",
	    cause)) != 0 ||
	    (error = kube_blob(e, CURLOPT_SSLKEY_BLOB, cfg->key_file,
	    cfg->key_data, cfg->key_len, "client-key", cause)) != 0)
		return (error);
	if (cfg->cert_file != NULL || cfg->cert_data != NULL)
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	if (cfg->key_file != NULL || cfg->key_data != NULL)
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	return (0);
}

void
kube_easy_done(struct kube *k, CURL *e)
{
	if (e == NULL)
		return;
	if (k->nidle < KUBE_IDLE_EASY)
		k->idle[k->nidle++] = e;
	else
		curl_easy_cleanup(e);
}

static int
kube_setup_easy(struct kube_request *r, char **cause)
{
	CURL	*e;
	int	 error;

	if (r->body != NULL) {
		r->headers = curl_slist_append(r->headers,
		    strcmp(r->method, "PATCH") == 0 ?
		    "Content-Type: application/merge-patch+json" :
		    "Content-Type: application/json");
	}
	error = kube_easy_new(r->kube, r->url, &r->headers, r->errbuf, &e,
	    cause);
	r->easy = e;
	if (error != 0)
		return (error);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, kube_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)r->kube->opts.timeout_ms);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)KUBE_MAX_BODY);
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "POST") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (r->body != NULL) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE,
		    (long)strlen(r->body));
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	} else if (strcmp(r->method, "POST") == 0) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
	}
	return (0);
}

static void
kube_start_attempt(struct kube_request *r)
{
	struct kube	*k = r->kube;
	char		*cause = NULL;
	CURLMcode	 mc;

	r->attempt++;
	r->errbuf[0] = '\0';
	r->too_large = 0;
	free(r->resp);
	r->resp = NULL;
	r->resplen = 0;
	if (kube_setup_easy(r, &cause) != 0) {
		kube_easy_done(k, r->easy);
		r->easy = NULL;
		r->status = 0;
		free(r->error);
		xasprintf(&r->error, "%s %s: %s", r->method, r->url, cause);
		free(cause);
		kube_note_failure(k, r->error);
		kube_finish(r);
		return;
	}
	if ((mc = curl_multi_add_handle(k->req.multi, r->easy)) != CURLM_OK) {
		kube_easy_done(k, r->easy);
		r->easy = NULL;
		r->status = 0;
		free(r->error);
		xasprintf(&r->error, "%s %s: %s", r->method, r->url,
		    curl_multi_strerror(mc));
		kube_note_failure(k, r->error);
		kube_finish(r);
	}
}

/* A request on its way, its callback and body still to be set. */
static struct kube_request *
kube_request_new(struct kube *k, const char *method, const char *path,
    void *arg)
{
	struct kube_request	*r;

	r = xcalloc(1, sizeof *r);
	r->kube = k;
	r->arg = arg;
	r->method = xstrdup(method);
	xasprintf(&r->url, "%s%s", k->cfg->server, path);
	evtimer_assign(&r->timer, k->base, kube_timer_cb, r);
	TAILQ_INSERT_TAIL(&k->requests, r, entry);
	k->nrequests++;

	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0 &&
	    strcmp(method, "PUT") != 0 && strcmp(method, "DELETE") != 0 &&
	    strcmp(method, "PATCH") != 0) {
		xasprintf(&r->error, "%s %s: unknown method", method, path);
	} else if (path[0] != '/') {
		xasprintf(&r->error, "%s %s: path must start with /",
		    method, path);
	}
	return (r);
}

/* Starts r on the loop, so that its callback never runs in here; or,
 * when r->error says it cannot start, finishes it with that. */
static struct kube_request *
kube_request_go(struct kube_request *r)
{
	struct timeval	tv = { 0, 0 };

	if (r->error != NULL) {
		kube_note_failure(r->kube, r->error);
		kube_finish(r);
		return (NULL);
	}
	evtimer_add(&r->timer, &tv);
	return (r);
}

struct kube_request *
kube_request(struct kube *k, const char *method, const char *path,
    json_t *body, kube_cb cb, void *arg)
{
	struct kube_request	*r;

	r = kube_request_new(k, method, path, arg);
	r->cb = cb;
	if (r->error == NULL && body != NULL &&
	    (r->body = json_dumps(body, JSON_COMPACT)) == NULL)
		xasprintf(&r->error, "%s %s: cannot encode the body", method,
		    path);
	return (kube_request_go(r));
}

struct kube_request *
kube_request_pick(struct kube *k, const char *method, const char *path,
    char *body, const char *const *pick, kube_pick_cb cb, void *arg)
{
	struct kube_request	*r;

	r = kube_request_new(k, method, path, arg);
	r->pick_cb = cb;
	r->pick = pick;
	r->body = body;
	return (kube_request_go(r));
}

void
kube_cancel(struct kube_request *r)
{
	if (r == NULL || r->kube == NULL)
		return;
	TAILQ_REMOVE(&r->kube->requests, r, entry);
	kube_request_free(r);
}

static int
kube_multi_init(struct kube *k, struct kube_multi *km,
    void (*done)(struct kube *, CURL *, CURLcode), void (*after)(struct kube *))
{
	km->kube = k;
	km->done = done;
	km->after = after;
	LIST_INIT(&km->socks);
	if ((km->multi = curl_multi_init()) == NULL)
		return (-ENOMEM);
	evtimer_assign(&km->timer, k->base, kube_curl_timer_cb, km);
	curl_multi_setopt(km->multi, CURLMOPT_SOCKETFUNCTION, kube_curl_socket);
	curl_multi_setopt(km->multi, CURLMOPT_SOCKETDATA, km);
	curl_multi_setopt(km->multi, CURLMOPT_TIMERFUNCTION, kube_curl_timer);
	curl_multi_setopt(km->multi, CURLMOPT_TIMERDATA, km);
	return (0);
}

static void
kube_multi_clear(struct kube_multi *km)
{
	struct kube_sock	*s;

	if (km->multi == NULL)
		return;
	/* Sockets curl did not hand back while cleaning up go after. */
	curl_multi_cleanup(km->multi);
	km->multi = NULL;
	while ((s = LIST_FIRST(&km->socks)) != NULL) {
		event_del(&s->ev);
		LIST_REMOVE(s, entry);
		free(s);
	}
	evtimer_del(&km->timer);
}

int
kube_new(struct event_base *base, const struct kube_opts *opts,
    struct kube **out, char **cause)
{
	struct kube			*k;
	const curl_version_info_data	*ver;
	int				 error;

	*out = NULL;
	k = xcalloc(1, sizeof *k);
	k->base = base;
	k->opts = *opts;
	if (k->opts.timeout_ms <= 0)
		k->opts.timeout_ms = 10000;
	if (k->opts.retries < 0)
		k->opts.retries = 0;
	if (k->opts.backoff_ms <= 0)
		k->opts.backoff_ms = 500;
	TAILQ_INIT(&k->requests);
	TAILQ_INIT(&k->watches);
	/* No API server, no TLS library set up: that costs megabytes. */
	if ((error = kube_config_load(opts->kubeconfig, &k->cfg,
	    cause)) != 0) {
		free(k);
		return (error);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		kube_config_free(k->cfg);
		free(k);
		xasprintf(cause, "cannot initialise libcurl");
		return (-ENOMEM);
	}
	if (kube_multi_init(k, &k->req, kube_request_done, NULL) != 0 ||
	    kube_multi_init(k, &k->watch, kube_watch_done,
	    kube_watch_after) != 0) {
		kube_multi_clear(&k->req);
		kube_multi_clear(&k->watch);
		kube_config_free(k->cfg);
		free(k);
		curl_global_cleanup();
		xasprintf(cause, "cannot make a curl multi handle");
		return (-ENOMEM);
	}
	ver = curl_version_info(CURLVERSION_NOW);
	if ((ver->features & CURL_VERSION_ASYNCHDNS) == 0)
		log_warn("kube: libcurl %s resolves names synchronously; "
		    "give the API server as an address", ver->version);
	/* Many claims read at once queue rather than open as many
	 * connections; over HTTP/2 they share one anyway. */
	curl_multi_setopt(k->req.multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    (long)KUBE_MAX_CONNECTIONS);
	*out = k;
	return (0);
}

void
kube_free(struct kube *k)
{
	struct kube_request	*r;

	if (k == NULL)
		return;
	/* Watches first: their lists are requests. */
	kube_watch_free_all(k);
	while ((r = TAILQ_FIRST(&k->requests)) != NULL) {
		TAILQ_REMOVE(&k->requests, r, entry);
		kube_request_free(r);
	}
	while (k->nidle > 0)
		curl_easy_cleanup(k->idle[--k->nidle]);
	kube_multi_clear(&k->req);
	kube_multi_clear(&k->watch);
	kube_config_free(k->cfg);
	free(k->last_error);
	free(k);
	curl_global_cleanup();
}

json_t *
kube_status(const struct kube *k)
{
	return (json_pack("{s:s, s:I, s:I, s:i, s:s?}",
	    "server", k->cfg->server,
	    "requests", (json_int_t)k->nrequests,
	    "failures", (json_int_t)k->nfailures,
	    "watches", kube_watch_count(k),
	    "lastError", k->last_error));
}

char *
kube_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			*out, *p;
	unsigned char		 c;

	out = p = xmalloc(strlen(s) * 3 + 1);
	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~')
			*p++ = (char)c;
		else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p = '\0';
	return (out);
}
