/*
 * slice.c owns the publication of the node's ResourceSlices (SPEC
 * R-SLICE): it asks the API server for the Node's uid (the slices' owner),
 * lists the slices of our driver on this node, works out what to create,
 * update and delete so that the pool says what slicedoc_build says, and
 * does it one request at a time. One publication runs at a time; devices
 * handed over meanwhile are published when it ends, the newest list
 * winning. A timer checks the slices again every resync interval because
 * the kubelet deletes them behind our back; failures are retried with a
 * doubling delay that never exceeds the interval.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/event_struct.h>
#include <jansson.h>

#include "cpuset.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "slice.h"
#include "slicedoc.h"
#include "xmalloc.h"

#define SLICE_PATH		"/apis/resource.k8s.io/v1/resourceslices"
/* Conflicts in a row answered by listing again at once, then backoff. */
#define SLICE_MAX_CONFLICTS	5
/* The first delay after a failure, doubling up to the resync interval. */
#define SLICE_BACKOFF_MS	1000

enum slice_step {
	SLICE_IDLE,
	SLICE_NODE,		/* GET the Node */
	SLICE_LIST,		/* GET our slices */
	SLICE_WRITE		/* POST, PUT, DELETE one after the other */
};

/*
 * The argument of one API request. It outlives the slice when the request
 * could not be cancelled (kube_request gave no handle): then s is NULL
 * and the callback only frees it.
 */
struct slice_call {
	struct slice		*s;
	struct kube_request	*req;
};

struct slice {
	struct event_base	*base;
	struct kube		*kube;
	char			*driver;
	char			*node;
	char			*node_uid;
	int			 resync_ms;
	struct event		 timer;

	/* What to publish: set by slice_publish. */
	struct dradev		*want;
	int			 nwant;
	int			 have_want;

	enum slice_step		 step;
	struct slice_call	*call;
	int			 again;		/* run once more after this */
	int			 conflicts;
	int			 backoff_ms;

	/* The publication under way. */
	struct dradev		*run;
	int			 nrun;
	long long		 run_gen;
	json_t			*ops;		/* [{method,path,body,slot}] */
	size_t			 next_op;
	int			 wrote;

	/*
	 * Per slot, the spec we last sent and the one the server kept: a
	 * server that drops fields it does not know (a feature gate off)
	 * would otherwise be rewritten at every resync.
	 */
	json_t			*sent;
	json_t			*kept;
	int			 warned_dropped;

	/* What status shows. */
	int			 published;
	long long		 generation;
	int			 nslices;
	int			 ndevices;
	char			*last_error;
};

static void	slice_list(struct slice *);
static void	slice_next_op(struct slice *);

static struct dradev *
slice_copy_devs(const struct dradev *devs, int n)
{
	struct dradev	*out;
	int		 i;

	out = xcalloc((size_t)n + 1, sizeof *out);
	for (i = 0; i < n; i++) {
		out[i] = devs[i];
		cpuset_init(&out[i].grantable);
		cpuset_copy(&out[i].grantable, &devs[i].grantable);
	}
	return (out);
}

static void
slice_arm(struct slice *s, int ms)
{
	struct timeval	tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_del(&s->timer);
	evtimer_add(&s->timer, &tv);
}

/* Start a publication soon, or right after the one under way. */
static void
slice_kick(struct slice *s)
{
	if (s->step != SLICE_IDLE)
		s->again = 1;
	else
		slice_arm(s, 0);
}

static void
slice_end_run(struct slice *s)
{
	json_decref(s->ops);
	s->ops = NULL;
	s->next_op = 0;
	dradev_free_list(s->run, s->nrun);
	s->run = NULL;
	s->nrun = 0;
	s->step = SLICE_IDLE;
}

/* what: the step that failed; error: why (kube's text). */
static void
slice_fail(struct slice *s, const char *what, const char *error)
{
	char	*msg;
	int	 delay;

	xasprintf(&msg, "%s: %s", what, error != NULL ? error :
	    "unexpected answer");
	/* A server without resource.k8s.io/v1 would say so every time. */
	if (s->last_error != NULL && strcmp(s->last_error, msg) == 0)
		log_debug("slice: %s", msg);
	else
		log_warnx("slice: %s", msg);
	metrics_inc("errors", "kind", "slice_publish");
	free(s->last_error);
	s->last_error = msg;
	s->published = 0;
	slice_end_run(s);

	if (s->backoff_ms <= 0)
		s->backoff_ms = SLICE_BACKOFF_MS;
	else
		s->backoff_ms *= 2;
	if (s->backoff_ms > s->resync_ms)
		s->backoff_ms = s->resync_ms;
	delay = s->backoff_ms;
	/* Newer devices than the failed ones are worth a try at once. */
	if (s->again) {
		s->again = 0;
		delay = 0;
	}
	slice_arm(s, delay);
}

static void
slice_done(struct slice *s)
{
	s->published = 1;
	s->generation = s->run_gen;
	s->nslices = slicedoc_count(s->nrun);
	s->ndevices = s->nrun;
	free(s->last_error);
	s->last_error = NULL;
	s->conflicts = 0;
	s->backoff_ms = 0;
	if (s->wrote)
		log_info("slice: published %d devices in %d slices, pool "
		    "generation %lld", s->ndevices, s->nslices, s->generation);
	slice_end_run(s);
	if (s->again) {
		s->again = 0;
		slice_arm(s, 0);
	} else
		slice_arm(s, s->resync_ms);
}

static void
slice_call(struct slice *s, const char *method, const char *path,
    json_t *body, kube_cb cb)
{
	struct slice_call	*c;

	c = xcalloc(1, sizeof *c);
	c->s = s;
	s->call = c;
	/* NULL: cb still runs, later, with the error. */
	c->req = kube_request(s->kube, method, path, body, cb, c);
}

/* The slice behind a call that just ended, NULL when it is gone. */
static struct slice *
slice_called(void *arg)
{
	struct slice_call	*c = arg;
	struct slice		*s = c->s;

	free(c);
	if (s != NULL)
		s->call = NULL;
	return (s);
}

static void
slice_node_cb(void *arg, int status, json_t *body, const char *error)
{
	struct slice	*s;
	const char	*uid;

	if ((s = slice_called(arg)) == NULL)
		return;
	uid = json_string_value(json_object_get(json_object_get(body,
	    "metadata"), "uid"));
	if (status == 200 && uid != NULL && *uid != '\0') {
		s->node_uid = xstrdup(uid);
		log_debug("slice: node %s has uid %s", s->node, uid);
	} else {
		/* The slices go out without an owner; asked again later. */
		log_info("slice: no uid for node %s (%s); publishing without "
		    "an owner", s->node, error != NULL ? error :
		    "no metadata.uid");
	}
	slice_list(s);
}

static void
slice_start(struct slice *s)
{
	char	*node, *path;

	s->run = slice_copy_devs(s->want, s->nwant);
	s->nrun = s->nwant;
	s->again = 0;
	s->conflicts = 0;
	if (s->node_uid == NULL) {
		s->step = SLICE_NODE;
		node = kube_escape(s->node);
		xasprintf(&path, "/api/v1/nodes/%s", node);
		slice_call(s, "GET", path, NULL, slice_node_cb);
		free(path);
		free(node);
		return;
	}
	slice_list(s);
}

static void
slice_timer_cb(evutil_socket_t fd, short events, void *arg)
{
	struct slice	*s = arg;

	if (!s->have_want)
		return;
	if (s->step != SLICE_IDLE) {
		s->again = 1;
		return;
	}
	slice_start(s);
}

/* Slot of an existing slice: the one that starts with the same device. */
static int
slice_same_first(const json_t *item, const json_t *want)
{
	const char	*a, *b;

	a = slicedoc_first_device(item);
	b = slicedoc_first_device(want);
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* have is what we want, or what the server kept of it last time. */
static int
slice_is_current(struct slice *s, int slot, const json_t *have,
    const json_t *want)
{
	json_t	*sent, *kept, *alt;
	int	 ok;

	if (slicedoc_matches(have, want))
		return (1);
	sent = json_array_get(s->sent, (size_t)slot);
	kept = json_array_get(s->kept, (size_t)slot);
	if (sent == NULL || kept == NULL ||
	    !json_equal(sent, json_object_get(want, "spec")))
		return (0);
	/* The kept spec in place of ours; the owner is still compared. */
	alt = json_copy((json_t *)want);
	json_object_set(alt, "spec", kept);
	ok = slicedoc_matches(have, alt);
	json_decref(alt);
	return (ok);
}

static void
slice_add_op(struct slice *s, const char *method, const char *name,
    json_t *body, int slot)
{
	char	*esc = NULL, *path;

	if (name != NULL) {
		esc = kube_escape(name);
		xasprintf(&path, "%s/%s", SLICE_PATH, esc);
	} else
		path = xstrdup(SLICE_PATH);
	json_array_append_new(s->ops, json_pack("{s:s, s:s, s:o*, s:i}",
	    "method", method, "path", path, "body", body, "slot", slot));
	free(path);
	free(esc);
}

/* An update of item to want, keeping an owner we cannot name now. */
static json_t *
slice_update_body(const json_t *item, json_t *want)
{
	json_t	*meta, *imeta, *refs;

	meta = json_object_get(want, "metadata");
	imeta = json_object_get(item, "metadata");
	json_object_set(meta, "name", json_object_get(imeta, "name"));
	json_object_set(meta, "resourceVersion",
	    json_object_get(imeta, "resourceVersion"));
	refs = json_object_get(imeta, "ownerReferences");
	if (json_object_get(meta, "ownerReferences") == NULL && refs != NULL)
		json_object_set(meta, "ownerReferences", refs);
	return (want);
}

/* Gives each slot a slice to write over: first the one that already
 * starts with the slot's first device, then any left. owner[slot] is an
 * index of items or -1; used[i] says whether item i has a slot. */
static void
slice_assign(json_t *items, json_t **docs, int nslots, int *owner,
    int *used)
{
	json_t	*item;
	size_t	 i, nitems = json_array_size(items);
	int	 slot;

	memset(used, 0, (nitems + 1) * sizeof *used);
	for (slot = 0; slot < nslots; slot++) {
		owner[slot] = -1;
		json_array_foreach(items, i, item) {
			if (used[i] || !slice_same_first(item, docs[slot]))
				continue;
			owner[slot] = (int)i;
			used[i] = 1;
			break;
		}
	}
	for (slot = 0; slot < nslots; slot++) {
		if (owner[slot] != -1)
			continue;
		for (i = 0; i < nitems && used[i]; i++)
			;
		if (i == nitems)
			break;
		owner[slot] = (int)i;
		used[i] = 1;
	}
}

static void
slice_build(const struct slicedoc_pool *sp, json_t **docs, int nslots)
{
	int	slot;

	for (slot = 0; slot < nslots; slot++) {
		json_decref(docs[slot]);
		docs[slot] = slicedoc_build(sp, slot);
	}
}

/*
 * Works out the requests that make the pool what s->run says; items are
 * the slices that exist. Nothing is written when there are as many slices
 * as wanted and each says the right thing at the highest generation;
 * otherwise every slice is written with the next generation and the
 * surplus deleted.
 */
static void
slice_plan(struct slice *s, json_t *items)
{
	struct slicedoc_pool	 sp;
	json_t			*item, *body, **docs;
	long long		 gen, top = -1;
	size_t			 i, nitems;
	int			*owner, *used, slot, nslots;

	nitems = json_array_size(items);
	json_array_foreach(items, i, item) {
		gen = slicedoc_generation(item);
		if (gen > top)
			top = gen;
	}
	memset(&sp, 0, sizeof sp);
	sp.driver = s->driver;
	sp.node = s->node;
	sp.node_uid = s->node_uid;
	sp.devs = s->run;
	sp.ndevs = s->nrun;
	nslots = slicedoc_count(s->nrun);
	docs = xcalloc((size_t)nslots, sizeof *docs);
	owner = xcalloc((size_t)nslots, sizeof *owner);
	used = xcalloc(nitems + 1, sizeof *used);
	s->ops = json_array();

	if (top >= 0 && nitems == (size_t)nslots) {
		sp.generation = top;
		slice_build(&sp, docs, nslots);
		slice_assign(items, docs, nslots, owner, used);
		for (slot = 0; slot < nslots; slot++) {
			item = json_array_get(items, (size_t)owner[slot]);
			if (!slice_is_current(s, slot, item, docs[slot]))
				break;
		}
		if (slot == nslots) {
			s->run_gen = top;
			goto out;
		}
	}

	/* Never below what we published before the slices vanished. */
	sp.generation = (top > s->generation ? top : s->generation) + 1;
	s->run_gen = sp.generation;
	slice_build(&sp, docs, nslots);
	slice_assign(items, docs, nslots, owner, used);
	for (slot = 0; slot < nslots; slot++) {
		if (owner[slot] == -1) {
			slice_add_op(s, "POST", NULL, json_incref(docs[slot]),
			    slot);
			continue;
		}
		item = json_array_get(items, (size_t)owner[slot]);
		body = slice_update_body(item, json_incref(docs[slot]));
		slice_add_op(s, "PUT", json_string_value(json_object_get(
		    json_object_get(item, "metadata"), "name")), body, slot);
	}
	/* Deleted last: the new generation is complete before. */
	json_array_foreach(items, i, item) {
		if (used[i])
			continue;
		body = json_pack("{s:s, s:s, s:{s:O?}}",
		    "apiVersion", "v1", "kind", "DeleteOptions",
		    "preconditions", "resourceVersion",
		    json_object_get(json_object_get(item, "metadata"),
		    "resourceVersion"));
		slice_add_op(s, "DELETE", json_string_value(json_object_get(
		    json_object_get(item, "metadata"), "name")), body, -1);
	}

out:
	for (slot = 0; slot < nslots; slot++)
		json_decref(docs[slot]);
	free(docs);
	free(owner);
	free(used);
}

static void
slice_list_cb(void *arg, int status, json_t *body, const char *error)
{
	struct slice	*s;
	json_t		*items;

	if ((s = slice_called(arg)) == NULL)
		return;
	if (status != 200 || !json_is_object(body)) {
		slice_fail(s, "listing the slices", error);
		return;
	}
	items = json_object_get(body, "items");
	if (items != NULL && json_is_null(items))
		items = NULL;
	if (items != NULL && !json_is_array(items)) {
		slice_fail(s, "listing the slices", "items is not a list");
		return;
	}
	slice_plan(s, items);
	s->step = SLICE_WRITE;
	s->wrote = json_array_size(s->ops) != 0;
	slice_next_op(s);
}

static void
slice_list(struct slice *s)
{
	char	*node, *driver, *path;

	s->step = SLICE_LIST;
	json_decref(s->ops);
	s->ops = NULL;
	s->next_op = 0;
	node = kube_escape(s->node);
	driver = kube_escape(s->driver);
	/* The selector's own "=" and "," are escaped too. */
	xasprintf(&path, "%s?fieldSelector=spec.nodeName%%3D%s%%2C"
	    "spec.driver%%3D%s", SLICE_PATH, node, driver);
	slice_call(s, "GET", path, NULL, slice_list_cb);
	free(path);
	free(driver);
	free(node);
}

static void
slice_grow(json_t *a, size_t n)
{
	while (json_array_size(a) < n)
		json_array_append_new(a, json_null());
}

/* Remember what the server kept of a slice we wrote. */
static void
slice_note_kept(struct slice *s, int slot, json_t *sent, json_t *body)
{
	json_t	*kept;

	kept = json_object_get(body, "spec");
	if (slot < 0 || kept == NULL)
		return;
	slice_grow(s->sent, (size_t)slot + 1);
	slice_grow(s->kept, (size_t)slot + 1);
	json_array_set(s->sent, (size_t)slot, json_object_get(sent, "spec"));
	json_array_set(s->kept, (size_t)slot, kept);
	if (!slicedoc_matches(body, sent) && !s->warned_dropped) {
		s->warned_dropped = 1;
		log_warnx("slice: the API server changed the slice it was "
		    "sent (a feature gate such as DRAConsumableCapacity "
		    "off?)");
	}
}

static void
slice_op_cb(void *arg, int status, json_t *body, const char *error)
{
	struct slice	*s;
	json_t		*op;
	const char	*method;

	if ((s = slice_called(arg)) == NULL)
		return;
	op = json_array_get(s->ops, s->next_op);
	method = json_string_value(json_object_get(op, "method"));
	if (status >= 200 && status < 300) {
		if (strcmp(method, "DELETE") != 0)
			slice_note_kept(s, (int)json_integer_value(
			    json_object_get(op, "slot")),
			    json_object_get(op, "body"), body);
		s->next_op++;
		slice_next_op(s);
		return;
	}
	if (status == 404 && strcmp(method, "DELETE") == 0) {
		s->next_op++;		/* gone already: what we wanted */
		slice_next_op(s);
		return;
	}
	/* Someone else wrote or removed it: look again. */
	if ((status == 409 || status == 404) &&
	    ++s->conflicts <= SLICE_MAX_CONFLICTS) {
		log_debug("slice: %s; listing again", error);
		slice_list(s);
		return;
	}
	slice_fail(s, "writing the slices", error);
}

static void
slice_next_op(struct slice *s)
{
	json_t	*op;

	if (s->next_op >= json_array_size(s->ops)) {
		slice_done(s);
		return;
	}
	op = json_array_get(s->ops, s->next_op);
	slice_call(s, json_string_value(json_object_get(op, "method")),
	    json_string_value(json_object_get(op, "path")),
	    json_object_get(op, "body"), slice_op_cb);
}

struct slice *
slice_new(struct event_base *base, struct kube *kube, const char *driver,
    const char *node, int resync_ms)
{
	struct slice	*s;

	s = xcalloc(1, sizeof *s);
	s->base = base;
	s->kube = kube;
	s->driver = xstrdup(driver);
	s->node = xstrdup(node);
	s->resync_ms = resync_ms < 10 ? 10 : resync_ms;
	s->sent = json_array();
	s->kept = json_array();
	evtimer_assign(&s->timer, base, slice_timer_cb, s);
	return (s);
}

void
slice_free(struct slice *s)
{
	if (s == NULL)
		return;
	if (s->call != NULL) {
		if (s->call->req != NULL) {
			kube_cancel(s->call->req);
			free(s->call);
		} else
			s->call->s = NULL;	/* its callback frees it */
	}
	evtimer_del(&s->timer);
	json_decref(s->ops);
	json_decref(s->sent);
	json_decref(s->kept);
	dradev_free_list(s->run, s->nrun);
	dradev_free_list(s->want, s->nwant);
	free(s->driver);
	free(s->node);
	free(s->node_uid);
	free(s->last_error);
	free(s);
}

void
slice_publish(struct slice *s, const struct dradev *devs, int n)
{
	if (s->have_want && dradev_equal(s->want, s->nwant, devs, n))
		return;
	dradev_free_list(s->want, s->nwant);
	s->want = slice_copy_devs(devs, n);
	s->nwant = n;
	s->have_want = 1;
	slice_kick(s);
}

void
slice_check(struct slice *s)
{
	/* Nothing to check before the first devices came. */
	if (s->have_want)
		slice_kick(s);
}

json_t *
slice_status(const struct slice *s)
{
	return (json_pack("{s:b, s:I, s:i, s:i, s:s?}",
	    "published", s->published,
	    "generation", (json_int_t)s->generation,
	    "slices", s->nslices,
	    "devices", s->ndevices,
	    "lastError", s->last_error));
}
