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
void	kube_cancel(struct kube_request *);
/* s percent-encoded for one path segment or query value: all but RFC
 * 3986's unreserved characters (caller frees). */
char	*kube_escape(const char *);

/* {"server","requests","failures","lastError"} for status. */
json_t	*kube_status(const struct kube *);

/* Bodies larger than this are refused (SPEC R-BAD). */
#define KUBE_MAX_BODY		(16 * 1024 * 1024)
/* Connections to the API server at once; more requests wait their turn. */
#define KUBE_MAX_CONNECTIONS	16
/* The longest wait between attempts. */
#define KUBE_MAX_BACKOFF_MS	30000

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
