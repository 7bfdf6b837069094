/*
 * The Kubernetes API client (SPEC R-KUBE): asynchronous on the event loop,
 * never blocking it. Requests time out and are retried with backoff; the
 * callback is called exactly once per request, on the loop, never from
 * inside kube_request().
 */
#ifndef TOPOAWARE_KUBE_H
#define TOPOAWARE_KUBE_H

#include <event2/event.h>
#include <jansson.h>

struct kube;
struct kube_request;

struct kube_opts {
	const char	*kubeconfig;	/* NULL: in-cluster service account */
	int		 timeout_ms;	/* per attempt */
	int		 retries;	/* attempts after the first */
	int		 backoff_ms;	/* first retry delay, doubling */
};

/*
 * status: the HTTP status (0 when no answer came: *error says why);
 * body: the parsed JSON answer or NULL (borrowed for the call only).
 */
typedef void	(*kube_cb)(void *arg, int status, json_t *body,
		    const char *error);

int	kube_new(struct event_base *, const struct kube_opts *, struct kube **,
	    char **cause);
void	kube_free(struct kube *);	/* pending callbacks are not called */

/* method "GET", "POST", "PUT", "DELETE"; path like "/apis/..."; body may be
 * NULL. Returns a handle to cancel with (or NULL if it could not start,
 * in which case cb still runs, later, with the error). */
/* Also "PATCH" (sent as application/merge-patch+json). The path is sent
 * as given: callers escape it. 4xx answers come back at once; transport
 * errors, timeouts, 5xx and 429 are retried, POST included. The handle is
 * invalid once cb has started; cancelling it from cb is a no-op. */
struct kube_request *kube_request(struct kube *, const char *method,
	    const char *path, json_t *body, kube_cb, void *arg);

/*
 * value: the string at the request's pick path in the answer (jsonpick.h),
 * NULL when it has none or is no answer (borrowed for the call only).
 */
typedef void	(*kube_pick_cb)(void *arg, int status, const char *value,
		    const char *error);

/*
 * A request as kube_request, whose answer is wanted for one string: the
 * answer is checked as JSON and that string kept, without a tree of the
 * rest (a NodeResourceTopology write's answer is the whole object, and
 * only its resourceVersion is read). body is JSON text, taken (NULL:
 * none); pick (keys from the top, NULL-ended) must last until cb.
 */
struct kube_request *kube_request_pick(struct kube *, const char *method,
	    const char *path, char *body, const char *const *pick,
	    kube_pick_cb, void *arg);
void	kube_cancel(struct kube_request *);
/* s percent-encoded for one path segment or query value: all but RFC
 * 3986's unreserved characters (caller frees). */
char	*kube_escape(const char *);

/* {"server","requests","failures","watches","lastError"} for status. */
json_t	*kube_status(const struct kube *);

/*
 * List-then-watch of one collection (kubewatch.c): the collection is
 * listed, then watched from the list's resourceVersion, streaming, each
 * event handed over as soon as it is decoded. A stream that ends is
 * watched again from the last resourceVersion seen (bookmarks included);
 * a failure is reported and retried after the backoff of kube_opts,
 * doubling up to KUBE_MAX_BACKOFF_MS and reset by a good event; 410 Gone
 * lists again. Watches have connections of their own: they never hold
 * the KUBE_MAX_CONNECTIONS slots of requests.
 */
struct kube_watch;

enum kube_watch_event {
	KUBE_WATCH_LIST,	/* obj: JSON array of every item, after each (re)list */
	KUBE_WATCH_ADDED,	/* obj: the object */
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,	/* obj: the object as it was last */
	KUBE_WATCH_ERROR	/* obj NULL; error says why; the watch retries by itself */
};

/* Called on the loop, never from inside kube_watch_new; obj and error are
 * borrowed for the call. kube_watch_free may be called from here (of any
 * watch), kube_free may not. */
typedef void	(*kube_watch_cb)(void *arg, enum kube_watch_event, json_t *obj,
		    const char *error);

/* List, then watch, the collection at path ("/api/v1/nodes"); query NULL or extra
 * query parameters, already escaped by the caller ("fieldSelector=metadata.name%3Dnode-a").
 * NULL when path does not start with '/'. kube_free frees the watches
 * left, without calling them back. */
struct kube_watch *kube_watch_new(struct kube *, const char *path, const char *query,
	    kube_watch_cb, void *arg);
void	kube_watch_free(struct kube_watch *);
/* {"path","resourceVersion","listed":bool,"watching":bool,"relists","reconnects","events","lastError"}
 * and "query", "bookmarks" (caller frees). */
json_t	*kube_watch_status(const struct kube_watch *);
/* "LIST", "ADDED", ... */
const char *kube_watch_event_name(enum kube_watch_event);

/* Bodies larger than this are refused (SPEC R-BAD). */
#define KUBE_MAX_BODY		(16 * 1024 * 1024)
/* Connections to the API server at once; more requests wait their turn. */
#define KUBE_MAX_CONNECTIONS	16
/* The longest wait between attempts. */
#define KUBE_MAX_BACKOFF_MS	30000
/* A watch asks the server to end its stream after this many seconds and
 * up to as many again, drawn at random so that the nodes of a cluster do
 * not all come back at once. */
#define KUBE_WATCH_SECONDS	300

/*
 * Where and how to reach the API server, from a kubeconfig or from the
 * in-cluster service account (kubeconfig.c). Each credential is a file
 * path or the decoded bytes of its -data form; *_len counts the bytes.
 */
struct kube_config {
	char		*server;	/* "https://host:port" */
	char		*ca_file;
	char		*ca_data;
	size_t		 ca_len;
	int		 insecure;	/* insecure-skip-tls-verify */
	char		*cert_file;
	char		*cert_data;
	size_t		 cert_len;
	char		*key_file;
	char		*key_data;
	size_t		 key_len;
	char		*token;
	char		*token_file;	/* read again for each request */
};

/*
 * path NULL: the in-cluster service account (KUBERNETES_SERVICE_HOST and
 * _PORT, the token and ca.crt of $TOPOAWARE_SA_DIR or the standard
 * folder). Relative file names are relative to the kubeconfig's folder.
 */
int	kube_config_load(const char *path, struct kube_config **,
	    char **cause);
void	kube_config_free(struct kube_config *);
/* The bearer token to send now, or NULL (caller frees). */
int	kube_config_token(const struct kube_config *, char **token,
	    char **cause);
/*
 * The bytes of a credential file (ca_file, cert_file, key_file), read
 * without blocking and bounded; what names it in the cause. The kubelet
 * rotates its client certificate on disk, so each connection attempt
 * reads them again, as it does the token. Caller frees *data.
 */
int	kube_config_file(const char *path, const char *what, char **data,
	    size_t *len, char **cause);

#endif
