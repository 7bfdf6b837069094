/*
 * What kube.c (requests) and kubewatch.c (list-then-watch) share: the
 * client, and the curl multi handles they drive on the loop. Not for
 * other modules.
 */
#ifndef TOPOAWARE_KUBE_PRIV_H
#define TOPOAWARE_KUBE_PRIV_H

#include <sys/queue.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "kube.h"

struct kube_sock;
LIST_HEAD(kube_socks, kube_sock);
TAILQ_HEAD(kube_requests, kube_request);
TAILQ_HEAD(kube_watches, kube_watch);

/* One curl multi handle on the loop; done is called for each finished
 * transfer, after curl returned (never inside a curl callback). */
struct kube_multi {
	struct kube		*kube;
	CURLM			*multi;
	struct event		 timer;
	struct kube_socks	 socks;
	void			(*done)(struct kube *, CURL *, CURLcode);
	/* After curl ran: work its callbacks left (watch events). */
	void			(*after)(struct kube *);
};

#define KUBE_IDLE_EASY	4

struct kube {
	struct event_base	*base;
	struct kube_config	*cfg;
	struct kube_opts	 opts;
	/* Requests and watches have their own connections, so that
	 * long-lived watches never hold the requests' slots. */
	struct kube_multi	 req;
	struct kube_multi	 watch;
	struct kube_requests	 requests;
	struct kube_watches	 watches;
	/* Inside curl or a watch's callback: kube_watch_free waits. */
	int			 busy;

	unsigned long long	 nrequests;
	unsigned long long	 nfailures;
	char			*last_error;
	/* Handles of finished requests, reset for the next ones: making
	 * one is a large allocation each time. */
	CURL			*idle[KUBE_IDLE_EASY];
	int			 nidle;
};

void	kube_note_failure(struct kube *, const char *what);
/*
 * A curl handle for url with what every transfer needs: credentials,
 * protocols, the Accept and Authorization headers (appended to *headers,
 * which the caller frees after the transfer), errbuf. Returns 0 or a
 * negative errno with *cause.
 */
int	kube_easy_new(struct kube *, const char *url,
	    struct curl_slist **headers, char *errbuf, CURL **,
	    char **cause);
/* A handle kube_easy_new gave (out of any multi), kept for the next
 * one or cleaned up; NULL is nothing. */
void	kube_easy_done(struct kube *, CURL *);
/* The delay before attempt n+1 (n >= 1): backoff_ms doubled, capped. */
int	kube_backoff(const struct kube *, int n);

/* kubewatch.c, for kube.c. */
void	kube_watch_done(struct kube *, CURL *, CURLcode);
void	kube_watch_after(struct kube *);
void	kube_watch_free_all(struct kube *);
int	kube_watch_count(const struct kube *);

/* The message of a Status answer (resp, len bytes), escaped for the log,
 * or NULL (caller frees). */
char	*kube_status_message(const char *resp, size_t len);

#endif
