/*
 * The node's ResourceSlices (SPEC R-SLICE, protocols.md 7.1): one pool
 * named after the node holding our DRA devices, at most
 * SLICEDOC_MAX_DEVICES devices per slice. Published through the API
 * client when the devices change, checked again every resync interval
 * and on demand, and created anew when they have disappeared (the kubelet
 * deletes a node's slices when it starts and 30 s after it loses a
 * plugin). Never blocks; failures are retried and shown in status.
 */
#ifndef TOPOAWARE_SLICE_H
#define TOPOAWARE_SLICE_H

#include <event2/event.h>
#include <jansson.h>

#include "dradev.h"

struct kube;
struct slice;

/* resync_ms: how often the published slices are checked (>= 10). */
struct slice	*slice_new(struct event_base *, struct kube *,
		    const char *driver, const char *node, int resync_ms);
/* Deletes nothing: the slices stay for the next start. NULL is a no-op. */
void		 slice_free(struct slice *);
/* The devices to publish from now on (copied). Publishes when they differ
 * from what is published, bumping the pool generation. Does not call
 * back. */
void		 slice_publish(struct slice *, const struct dradev *, int);
/* Check soon that the slices are still there (the kubelet registered us,
 * which it does after it started and wiped them). */
void		 slice_check(struct slice *);
/* {"published","generation","slices","devices","lastError"}: new ref. */
json_t		*slice_status(const struct slice *);

#endif
