/*
 * claimcheck.c reads held claims again to learn their consumers. One read
 * per claim at a time, joined by every container waiting on it, and the
 * next no sooner than CLAIMCHECK_INTERVAL_MS after the last: however often
 * a pod names a claim, the API server sees at most one read of it per
 * interval, and a pod that joined meanwhile is still seen.
 * A claim whose name is not known (saved by an older version) is found in
 * one list of all ResourceClaims, shared by all such claims.
 */
#include "autoconf.h"

#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "claimcheck.h"
#include "claimdoc.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "server.h"
#include "strmap.h"
#include "xmalloc.h"

#define CLAIM_GET	"/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s"
#define CLAIM_LIST	"/apis/resource.k8s.io/v1/resourceclaims"

struct claimcheck_wait {
	struct entry			*e;
	TAILQ_ENTRY(claimcheck_wait)	 link;
	claimcheck_cb			 cb;
	void				*arg;
};
TAILQ_HEAD(waits, claimcheck_wait);

/* One claim: its read in flight, when the last one ended. */
struct entry {
	struct claimcheck	*cc;
	char			*uid;
	struct kube_request	*req;		/* a GET of it */
	int			 listing;	/* waits for the list */
	struct event		*later;		/* a read planned */
	int			 ended;		/* a read ended at last */
	struct timespec		 last;
	struct waits		 waits;
};

struct claimcheck {
	struct server		*srv;
	struct kube		*kube;
	struct strmap		*entries;	/* uid -> struct entry */
	struct kube_request	*list;
};

static long long
ms_since(const struct timespec *t)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return ((long long)(now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000);
}

struct claimcheck *
claimcheck_new(struct server *srv, struct kube *kube)
{
	struct claimcheck	*cc;

	cc = xcalloc(1, sizeof *cc);
	cc->srv = srv;
	cc->kube = kube;
	cc->entries = strmap_new();
	return (cc);
}

static void
entry_free(struct entry *e)
{
	struct claimcheck_wait	*w;

	while ((w = TAILQ_FIRST(&e->waits)) != NULL) {
		TAILQ_REMOVE(&e->waits, w, link);
		free(w);
	}
	if (e->req != NULL)
		kube_cancel(e->req);
	if (e->later != NULL)
		event_free(e->later);
	free(e->uid);
	free(e);
}

/* A read of e is over: from now on the next waits its interval. Set
 * before what it found is applied, which may ask for e again. */
static void
entry_read(struct entry *e)
{
	e->req = NULL;
	e->listing = 0;
	e->ended = 1;
	clock_gettime(CLOCK_MONOTONIC, &e->last);
}

/* Everyone waiting on e is told; e stays for the interval, or goes when
 * its claim is not held any more (and no read of it is planned). */
static void
entry_ended(struct entry *e)
{
	struct claimcheck	*cc = e->cc;
	struct claimcheck_wait	*w;
	struct waits		 waits;

	TAILQ_INIT(&waits);
	TAILQ_CONCAT(&waits, &e->waits, link);
	if (policy_claim_cpus(cc->srv->policy, e->uid) == NULL &&
	    e->req == NULL && !e->listing) {
		strmap_del(cc->entries, e->uid);
		entry_free(e);
	}
	/* Waiters may start reads or cancel others: e may be gone. */
	while ((w = TAILQ_FIRST(&waits)) != NULL) {
		TAILQ_REMOVE(&waits, w, link);
		if (w->cb != NULL)
			w->cb(w->arg, w);
		free(w);
	}
}

/* The claim object obj, or NULL when the API has none any more. */
static void
apply(struct entry *e, json_t *obj, const char *missing)
{
	struct claimcheck	*cc = e->cc;
	struct claimdoc		*doc = NULL;
	struct claim_meta	 meta;
	char			*cause = NULL;

	if (obj == NULL) {
		metrics_inc("claim_reads", "result", "gone");
		log_warnx("claim %s: %s; its consumers stay as they were",
		    e->uid, missing);
		return;
	}
	if (claimdoc_parse_consumers(obj, e->uid, &doc, &cause) != 0) {
		metrics_inc("claim_reads", "result", "failed");
		log_warnx("claim %s: cannot read its consumers: %s", e->uid,
		    cause);
		free(cause);
		return;
	}
	claimdoc_policy_meta(doc, &meta);
	if (server_claim_consumers(cc->srv, e->uid, &meta, &cause) != 0) {
		metrics_inc("claim_reads", "result", "failed");
		log_warnx("claim %s: %s", e->uid, cause);
		free(cause);
	} else {
		metrics_inc("claim_reads", "result", "ok");
		log_debug("claim %s: %d consumer pod%s", e->uid, meta.npods,
		    meta.npods == 1 ? "" : "s");
	}
	claimdoc_free(doc);
}

static void
got_claim(void *arg, int status, json_t *body, const char *error)
{
	struct entry	*e = arg;

	entry_read(e);
	if (status == 200)
		apply(e, body, NULL);
	else if (status == 404)
		apply(e, NULL, "its ResourceClaim is not in the API server");
	else {
		metrics_inc("claim_reads", "result", "failed");
		log_warnx("claim %s: cannot read its ResourceClaim: %s", e->uid,
		    status != 0 ? "unexpected answer" : error ? error :
		    "no answer");
	}
	entry_ended(e);
}

static void
got_list(void *arg, int status, json_t *body, const char *error)
{
	struct claimcheck	*cc = arg;
	struct entry		**v;
	json_t			*items, *it = NULL;
	const char		*uid;
	size_t			 i, j, n;

	cc->list = NULL;
	items = status == 200 ? json_object_get(body, "items") : NULL;
	if (status != 200 || !json_is_array(items))
		log_warnx("cannot list ResourceClaims: %s", status == 200 ?
		    "the answer has no items" : error ? error :
		    "unexpected answer");
	v = (struct entry **)strmap_values(cc->entries, &n);
	for (i = 0; i < n; i++) {
		if (!v[i]->listing)
			continue;
		entry_read(v[i]);
		if (!json_is_array(items)) {
			metrics_inc("claim_reads", "result", "failed");
			entry_ended(v[i]);
			continue;
		}
		json_array_foreach(items, j, it) {
			uid = json_string_value(json_object_get(
			    json_object_get(it, "metadata"), "uid"));
			if (uid != NULL && strcmp(uid, v[i]->uid) == 0)
				break;
		}
		apply(v[i], j < json_array_size(items) ? it : NULL,
		    "no ResourceClaim in the API server has its UID");
		entry_ended(v[i]);
	}
	free(v);
}

static void
start_read(struct entry *e)
{
	struct claimcheck	*cc = e->cc;
	const char		*ns, *name;
	char			*path, *ens, *ename;

	if (policy_claim_ref(cc->srv->policy, e->uid, &ns, &name) != 0) {
		/* Released meanwhile: nothing to learn. */
		entry_ended(e);
		return;
	}
	if (ns != NULL && name != NULL) {
		ens = kube_escape(ns);
		ename = kube_escape(name);
		xasprintf(&path, CLAIM_GET, ens, ename);
		e->req = kube_request(cc->kube, "GET", path, NULL, got_claim,
		    e);
		free(path);
		free(ens);
		free(ename);
	} else {
		e->listing = 1;
		if (cc->list == NULL)
			cc->list = kube_request(cc->kube, "GET", CLAIM_LIST,
			    NULL, got_list, cc);
	}
}

static void
later_cb(evutil_socket_t fd, short what, void *arg)
{
	start_read(arg);
}

struct claimcheck_wait *
claimcheck_read(struct claimcheck *cc, const char *uid, claimcheck_cb cb,
    void *arg)
{
	struct claimcheck_wait	*w;
	struct entry		*e;
	struct timeval		 tv;
	long long		 wait;

	if (cc == NULL || policy_claim_cpus(cc->srv->policy, uid) == NULL)
		return (NULL);
	if ((e = strmap_get(cc->entries, uid)) == NULL) {
		e = xcalloc(1, sizeof *e);
		e->cc = cc;
		e->uid = xstrdup(uid);
		TAILQ_INIT(&e->waits);
		strmap_put(cc->entries, uid, e);
	}
	if (e->req == NULL && !e->listing && (e->later == NULL ||
	    !evtimer_pending(e->later, NULL))) {
		wait = e->ended ? CLAIMCHECK_INTERVAL_MS - ms_since(&e->last) :
		    0;
		if (wait > 0) {
			if (e->later == NULL && (e->later = evtimer_new(
			    cc->srv->base, later_cb, e)) == NULL)
				fatalx("cannot make a timer");
			tv.tv_sec = wait / 1000;
			tv.tv_usec = (wait % 1000) * 1000;
			if (evtimer_add(e->later, &tv) != 0)
				fatalx("cannot arm a timer");
		} else
			start_read(e);
	}
	w = xcalloc(1, sizeof *w);
	w->e = e;
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&e->waits, w, link);
	return (w);
}

void
claimcheck_cancel(struct claimcheck_wait *w)
{
	if (w == NULL)
		return;
	TAILQ_REMOVE(&w->e->waits, w, link);
	free(w);
}

void
claimcheck_unknown(struct claimcheck *cc)
{
	char	**uids;
	int	  i, n;

	n = policy_claims_unknown(cc->srv->policy, &uids);
	if (n > 0)
		log_info("reading the consumers of %d claim%s saved without "
		    "them", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		(void)claimcheck_read(cc, uids[i], NULL, NULL);
		free(uids[i]);
	}
	free(uids);
}

void
claimcheck_free(struct claimcheck *cc)
{
	struct claimcheck_wait	*w;
	struct entry		**v;
	size_t			  i, n;

	if (cc == NULL)
		return;
	if (cc->list != NULL)
		kube_cancel(cc->list);
	v = (struct entry **)strmap_values(cc->entries, &n);
	for (i = 0; i < n; i++) {
		while ((w = TAILQ_FIRST(&v[i]->waits)) != NULL) {
			TAILQ_REMOVE(&v[i]->waits, w, link);
			if (w->cb != NULL)
				w->cb(w->arg, w);
			free(w);
		}
		entry_free(v[i]);
	}
	free(v);
	strmap_free(cc->entries);
	free(cc);
}
