/*
 * The node's NodeResourceTopology object (SPEC R-NRT, anchor 8,
 * protocols.md 7.4): created or updated through the API client on a
 * timer (nodeResourceTopology.refreshSeconds) and, debounced, after every
 * change of grants, claims or config. A slow or failing API server only
 * delays it; the newest content wins. Never blocks.
 */
#ifndef TOPOAWARE_NRT_H
#define TOPOAWARE_NRT_H

#include <event2/event.h>
#include <jansson.h>

struct kube;
struct nrt;

/* The object's content now, without apiVersion, kind and metadata:
 * {"attributes":[...],"zones":[...]}, a new reference. */
typedef json_t	*(*nrt_content_cb)(void *arg);

/* debounce_ms: quiet period after a change before publishing (>= 0). */
struct nrt	*nrt_new(struct event_base *, struct kube *, const char *node,
		    int debounce_ms, nrt_content_cb, void *arg);
void		 nrt_free(struct nrt *);	/* NULL is a no-op */
/* From the config at start and after each reload; disabling stops the
 * timer and leaves the object as it is. */
void		 nrt_configure(struct nrt *, int enabled, int refresh_seconds);
/* Something changed: publish after the debounce. Does not call back. */
void		 nrt_changed(struct nrt *);
/* {"enabled","published","lastPublished","updates","lastError"}. */
json_t		*nrt_status(const struct nrt *);

#endif
