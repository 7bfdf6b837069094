/*
 * nri.c owns the NRI plugin (SPEC R-NRI): the connection to the runtime's
 * socket on the event loop, the multiplexer with ttrpc on both of its
 * logical connections, registration, Configure and Synchronize (split
 * or whole), the container events turned into server operations, the
 * UpdateContainers requests for changes no reply carries, and reconnecting
 * with backoff whenever the runtime goes away or talks nonsense.
 *
 * Nothing here waits for the runtime: a handler answers from what the
 * policy says at once, and our own requests are answered whenever the
 * runtime gets to them (protocols.md 9.4: containerd holds its NRI lock
 * while it waits for an event's reply and takes it again for an
 * UpdateContainers).
 */
#include "autoconf.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <jansson.h>

#include "gate.h"
#include "log.h"
#include "metrics.h"
#include "claimcheck.h"
#include "mux.h"
#include "nri.h"
#include "nri_msg.h"
#include "pbarena.h"
#include "pbcheck.h"
#include "pbpick.h"
#include "prefault.h"
#include "server.h"
#include "strmap.h"
#include "strpool.h"
#include "ttrpc.h"
#include "xmalloc.h"

/* Named limits (topoawared(8) lists them). */
#define NRI_PLUGIN_NAME		"topoaware"
#define NRI_BACKOFF_MIN_MS	100
#define NRI_REGISTER_TIMEOUT_MS	5000	/* the runtime's own deadline */
#define NRI_REQUEST_TIMEOUT_MS	2000	/* unless Configure says */
#define NRI_MAX_OUTPUT		(64U << 20)	/* bytes not yet written */
#define NRI_MAX_PENDING		64	/* our requests not yet answered */
#define NRI_UPDATES_PER_REQUEST	1024	/* in one UpdateContainers */
#define NRI_PUSH_BYTES		(1U << 20)	/* of updates in one request */
/* Updates in one reply; what does not fit follows in UpdateContainers. */
#define NRI_REPLY_BYTES		(TTRPC_MAX_DATA - 64 * 1024)
#define NRI_MAX_SYNC_CONTAINERS	POLICY_MAX_CONTAINERS
/* The heap a synchronized container takes (its grant, spec, index entries
 * and placement record: some 2.6 KiB on the bench's 448-CPU machine), and
 * its part of the Synchronize's journal record (some 0.75 KiB more). */
#define NRI_SYNC_HEAP_PER_CONTAINER	((size_t)4 << 10)
#define NRI_MAX_SYNC_PODS	POLICY_MAX_CONTAINERS
#define NRI_MAX_SYNC_PARTS	1024	/* messages of one Synchronize */
#define NRI_READ_MAX		(256 * 1024)	/* bytes read per wakeup */
#define NRI_MAX_DEFERRED	64	/* creates waiting for claim reads */

/* A frame this long is queued for writing where it is, not copied. */
#define NRI_SEND_BY_REFERENCE	(64 * 1024)

#define NRI_SERVICE_PLUGIN	"nri.pkg.api.v1alpha1.Plugin"
#define NRI_SERVICE_RUNTIME	"nri.pkg.api.v1alpha1.Runtime"

#define EV(e)		NRI__PKG__API__V1ALPHA1__EVENT__##e
#define CONTAINER_STOPPED \
	NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_STOPPED
#define CONTAINER_RUNNING \
	NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_RUNNING
#define EVENT_BIT(e)	(1 << (EV(e) - 1))
/*
 * The events a CPU policy needs, within the 0x7FF every runtime accepts.
 * Creation carries its pod, so pod creation is not needed; a pod's removal
 * releases containers the runtime did not stop one by one.
 */
#define NRI_EVENTS	(EVENT_BIT(REMOVE_POD_SANDBOX) |		\
			 EVENT_BIT(CREATE_CONTAINER) |			\
			 EVENT_BIT(UPDATE_CONTAINER) |			\
			 EVENT_BIT(START_CONTAINER) |			\
			 EVENT_BIT(STOP_CONTAINER) |			\
			 EVENT_BIT(REMOVE_CONTAINER))

enum pending_kind {
	PENDING_REGISTER,
	PENDING_UPDATE
};

/* One request of ours on connection 2, until its answer comes. */
struct pending {
	TAILQ_ENTRY(pending)	 entry;
	struct conn		*c;
	uint32_t		 stream;
	enum pending_kind	 kind;
	int			 nupdates;
	int			 expired;	/* its deadline passed */
	int			 in_round;	/* counted in c->round */
	int			 late;		/* expired, counted in c->late */
	struct event		*timer;
};
TAILQ_HEAD(pendings, pending);

/*
 * A CreateContainer whose container names held claims its pod is not
 * known to consume: answered once the claims are read again (claimcheck.c)
 * or CLAIMCHECK_ANSWER_MS passed, whichever comes first. It owns the
 * request.
 */
struct deferred {
	TAILQ_ENTRY(deferred)		 entry;
	struct conn			*c;
	uint32_t			 stream;
	NRI(CreateContainerRequest)	*req;
	struct pbarena			*mem;	/* req's */
	struct event			*timer;
	struct timespec			 t0;
	int				 nwaits;
	struct claimcheck_wait		*waits[POLICY_MAX_CLAIM_ENV];
};
TAILQ_HEAD(deferreds, deferred);

/* One connection to the runtime; a new one after every reconnect. */
struct conn {
	struct nri		*n;
	struct bufferevent	*bev;
	struct mux		*mux;
	struct ttrpc_reader	*rd_plugin;	/* the runtime's requests */
	struct ttrpc_reader	*rd_runtime;	/* answers to ours */
	struct ttrpc_streams	 srv;
	struct ttrpc_streams	 cli;
	struct pendings		 pending;
	int			 npending;
	/*
	 * A round of pushes: the UpdateContainers requests of one flush,
	 * until each is answered or expired. The queue waits for the round
	 * to end. The runtime applies a push it holds behind its NRI lock
	 * after the replies of the events it handles meanwhile, so a reply
	 * that moves a container of the round must not be the one undone:
	 * that container is pushed again once the round is over. An
	 * expired request ends its part of the round (the queue must not
	 * wait on a runtime past its deadline), but its containers are
	 * still watched for until it is answered, and its late answer
	 * pushes every container still watched again: it may have been
	 * applied after any of their later pushes.
	 */
	int			 round;		/* its requests still out */
	int			 late;		/* expired ones, not answered */
	/* Their containers: a list as they are sent, and a map only when
	 * a reply asks (most rounds end before one does). */
	struct strpool		 round_pool;	/* round_ids' strings */
	const char		**round_ids;
	size_t			 round_n;
	size_t			 round_cap;
	struct strmap		*round_map;	/* NULL until asked */
	struct deferreds	 deferred;
	int			 ndeferred;
	int			 dead;
	int			 shutdown;	/* close once written out */
	int			 registered;
	int			 synchronized;
	long long		 request_timeout_ms;

	/* A Synchronize split in parts, kept until the last one. */
	NRI(SynchronizeRequest)	**parts;
	struct pbarena		**parts_mem;	/* each part's */
	int			 nparts;
	size_t			 sync_pods;
	size_t			 sync_ctrs;
};

/*
 * The containers whose pinnings go to the runtime, in the order they came.
 * Only ids: what is sent is each one's pinning in the policy when it is
 * sent, the latest one (a moved shared container is not copied three
 * times on its way out).
 */
struct acc {
	const char	**ids;	/* idx's keys; NULL where one was dropped */
	int		  n;
	int		  cap;	/* room in ids */
	struct strmap	 *idx;	/* id -> index + 1; keys pooled */
};

/* A container the runtime told us of, for RemovePodSandbox: its id and
 * its pod's in one block (the ctrs map keeps its id as the key). */
struct ctr {
	char			*id;
	char			*pod;
	TAILQ_ENTRY(ctr)	 in_pod;
	char			 text[];
};
TAILQ_HEAD(ctrlist, ctr);

struct nri {
	struct server	*srv;
	struct conn	*c;
	struct event	*ev_retry;
	struct event	*ev_close;
	struct event	*ev_flush;
	int		 backoff_ms;
	int		 quiet;		/* a connect failure was logged */
	unsigned	 connects;
	unsigned long	 failed_updates;
	char		*error;
	struct strmap	*ctrs;		/* id -> struct ctr */
	struct strmap	*pods;		/* pod id -> struct ctrlist */
	struct acc	 queue;		/* updates to push */
	struct pbpick	*sync_pick;	/* a Synchronize's fields we read */
};

/* The request being handled. */
struct call {
	struct conn	*c;
	uint32_t	 stream;
	const char	*method;
	/* The request's memory (pbarena.h): a handler that keeps the
	 * request past its return (*msg = NULL) takes this too. */
	struct pbarena	*mem;
};

static void	conn_fail(struct conn *, const char *, const char *, ...)
		    __attribute__((__format__(__printf__, 3, 4)));
static void	nri_connect(struct nri *);
static void	sync_reset(struct conn *);

static void
set_error(struct nri *n, const char *msg)
{
	free(n->error);
	/* Status is JSON: peer bytes must not make it invalid UTF-8. */
	n->error = msg != NULL ? log_escape(msg, 512) : NULL;
}

static double
elapsed(const struct timespec *t0)
{
	struct timespec	t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9);
}

static void
acc_init(struct acc *a)
{
	memset(a, 0, sizeof *a);
	a->idx = strmap_new_pooled();
}

static void
acc_clear(struct acc *a)
{
	free(a->ids);
	strmap_free(a->idx);
	memset(a, 0, sizeof *a);
}

/* Empty, keeping its room: the queue is filled and emptied each turn. */
static void
acc_reset(struct acc *a)
{
	strmap_reset(a->idx);
	a->n = 0;
}

static int
acc_has(const struct acc *a, const char *id)
{
	return (strmap_get(a->idx, id) != NULL);
}

static void
acc_add(struct acc *a, const char *id)
{
	const char	*own;

	if (id == NULL || (own = strmap_add(a->idx, id,
	    (void *)(intptr_t)(a->n + 1))) == NULL)
		return;
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->ids = xreallocarray(a->ids, (size_t)a->cap, sizeof *a->ids);
	}
	a->ids[a->n++] = own;
}

static void
acc_merge(struct acc *a, const struct policy_update *u, int n)
{
	int	k;

	for (k = 0; k < n; k++)
		acc_add(a, u[k].id);
}

/* A container that is gone needs no update. */
static void
acc_drop(struct acc *a, const char *id)
{
	intptr_t	i;

	/* Its key goes with it. */
	if ((i = (intptr_t)strmap_del(a->idx, id)) != 0)
		a->ids[i - 1] = NULL;
}

static size_t
acc_count(const struct acc *a)
{
	return (strmap_count(a->idx));
}

/* Their pinnings as the policy holds them now; one it no longer holds
 * is left out. */
static void
acc_updates(const struct acc *a, const struct policy *P,
    struct nri_updates *us)
{
	const struct pinning	*p;
	int			 i;

	nri_updates_reserve(us, us->n + (size_t)a->n);
	for (i = 0; i < a->n; i++)
		if (a->ids[i] != NULL &&
		    (p = policy_pinning(P, a->ids[i])) != NULL)
			nri_updates_add(us, p);
}

/*
 * How many of the first updates, of the sizes given, fit in budget bytes
 * of a message; their bytes in *used. On machines with thousands of CPUs
 * a cpuset is kilobytes long, and a message over 4 MiB would be refused
 * whole.
 */
/* The bytes each update takes in a message (nriupd_size), to free. */
static size_t *
updates_sizes(const struct nri_updates *us)
{
	size_t	*sizes, i;

	sizes = xreallocarray(NULL, us->n + 1, sizeof *sizes);
	for (i = 0; i < us->n; i++)
		sizes[i] = nri_updates_size(us, i);
	return (sizes);
}

static size_t
updates_fit(const size_t *sizes, size_t n, size_t budget, size_t *used)
{
	size_t	i;

	*used = 0;
	for (i = 0; i < n; i++) {
		if (*used + sizes[i] > budget)
			break;
		*used += sizes[i];
	}
	return (i);
}

/*
 * The containers the runtime told us of (ctrs), and by pod (pods: pod id
 * -> struct ctrlist), so that a pod's removal finds its containers
 * without a walk of every container.
 */
static void
ctr_free(struct ctr *t)
{
	free(t);
}

static void
table_clear(struct nri *n)
{
	void	**v;
	size_t	  i, k;

	v = strmap_values(n->ctrs, &k);
	for (i = 0; i < k; i++)
		ctr_free(v[i]);
	free(v);
	strmap_free(n->ctrs);
	n->ctrs = strmap_new_borrowing();
	strmap_free_all(n->pods, free);
	n->pods = strmap_new();
}

/* Takes t out of the table and frees it. */
static void
table_drop(struct nri *n, struct ctr *t)
{
	struct ctrlist	*l;

	if (t == NULL)
		return;
	if ((l = strmap_get(n->pods, t->pod)) != NULL) {
		TAILQ_REMOVE(l, t, in_pod);
		if (TAILQ_EMPTY(l))
			free(strmap_del(n->pods, t->pod));
	}
	ctr_free(t);
}

static void
table_put(struct nri *n, const char *id, const char *pod)
{
	struct ctrlist	*l;
	struct ctr	*t;
	size_t		 il = strlen(id), pl;

	if (pod == NULL)
		pod = "";
	pl = strlen(pod);
	/* Copied before the old entry goes: id may be its own. */
	t = xmalloc(sizeof *t + il + pl + 2);
	t->id = memcpy(t->text, id, il + 1);
	t->pod = memcpy(t->text + il + 1, pod, pl + 1);
	table_drop(n, strmap_del(n->ctrs, t->id));
	if ((l = strmap_get(n->pods, t->pod)) == NULL) {
		l = xmalloc(sizeof *l);
		TAILQ_INIT(l);
		strmap_put(n->pods, t->pod, l);
	}
	TAILQ_INSERT_TAIL(l, t, in_pod);
	strmap_put(n->ctrs, t->id, t);
}

static void
table_del(struct nri *n, const char *id)
{
	table_drop(n, strmap_del(n->ctrs, id));
}

/* Connections. */
static void
pending_free(struct pending *p)
{
	if (p->timer != NULL)
		event_free(p->timer);
	free(p);
}

static void
deferred_free(struct deferred *d)
{
	int	i;

	for (i = 0; i < d->nwaits; i++)
		claimcheck_cancel(d->waits[i]);
	if (d->timer != NULL)
		event_free(d->timer);
	pbarena_free(d->mem);
	TAILQ_REMOVE(&d->c->deferred, d, entry);
	d->c->ndeferred--;
	free(d);
}

static void
conn_free(struct conn *c)
{
	struct pending	*p;

	if (c == NULL)
		return;
	while ((p = TAILQ_FIRST(&c->pending)) != NULL) {
		TAILQ_REMOVE(&c->pending, p, entry);
		pending_free(p);
	}
	while (TAILQ_FIRST(&c->deferred) != NULL)
		deferred_free(TAILQ_FIRST(&c->deferred));
	sync_reset(c);
	ttrpc_reader_free(c->rd_plugin);
	ttrpc_reader_free(c->rd_runtime);
	mux_free(c->mux);
	if (c->bev != NULL) {
		gate_leave(c->n->srv->gate, c->bev);
		bufferevent_free(c->bev);
	}
	strpool_clear(&c->round_pool);
	free(c->round_ids);
	strmap_free(c->round_map);
	free(c);
}

/* A container a push of the round carries. */
static void
round_add(struct conn *c, const char *id)
{
	if (c->round_n == c->round_cap) {
		c->round_cap = c->round_cap ? 2 * c->round_cap : 256;
		c->round_ids = xreallocarray(c->round_ids, c->round_cap,
		    sizeof *c->round_ids);
	}
	c->round_ids[c->round_n] = strpool_dup(&c->round_pool, id);
	if (c->round_map != NULL)
		strmap_put(c->round_map, c->round_ids[c->round_n], c);
	c->round_n++;
}

/* Whether a push of the round (or a late one) carries container id. */
static int
round_has(struct conn *c, const char *id)
{
	size_t	i;

	if (c->round_n == 0)
		return (0);
	if (c->round_map == NULL) {
		c->round_map = strmap_new_pooled();
		for (i = 0; i < c->round_n; i++)
			strmap_put(c->round_map, c->round_ids[i], c);
	}
	return (strmap_get(c->round_map, id) != NULL);
}

static void
round_forget(struct conn *c)
{
	strpool_reset(&c->round_pool);
	c->round_n = 0;
	strmap_free(c->round_map);
	c->round_map = NULL;
}

/* A push of the round is answered or expired (expired); the last ends
 * the round and lets the queue go. */
static void
round_left(struct conn *c, struct pending *p, int expired)
{
	size_t	i;

	if (p->in_round) {
		p->in_round = 0;
		c->round--;
		if (expired) {
			p->late = 1;
			c->late++;
		}
	} else if (p->late && !expired) {
		p->late = 0;
		c->late--;
		for (i = 0; i < c->round_n; i++)
			acc_add(&c->n->queue, c->round_ids[i]);
	}
	if (c->round > 0)
		return;
	if (c->late == 0)
		round_forget(c);
	if (acc_count(&c->n->queue) > 0)
		event_active(c->n->ev_flush, EV_TIMEOUT, 0);
}

/*
 * Closes the connection from anywhere, callbacks included: it only stops
 * reading and marks it; close_cb frees it on the next loop pass. kind is
 * the error counted, NULL for an ordinary end.
 */
static void
conn_fail(struct conn *c, const char *kind, const char *fmt, ...)
{
	struct nri	*n = c->n;
	va_list		 ap;
	char		*msg;

	if (c->dead)
		return;
	c->dead = 1;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	log_warnx("NRI: closing the connection to the runtime: %s",
	    msg != NULL ? msg : "?");
	set_error(n, msg);
	free(msg);
	metrics_inc("nri_disconnects", NULL, NULL);
	metrics_inc("nri_events", "event", "disconnect");
	if (kind != NULL)
		metrics_inc("errors", "kind", kind);
	if (c->bev != NULL) {
		gate_leave(n->srv->gate, c->bev);
		bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	}
	event_active(n->ev_close, EV_TIMEOUT, 0);
}

/* The group commit failed: what this connection holds must not go. */
static void
gate_drop_cb(void *arg)
{
	conn_fail(arg, NULL, "the state could not be made durable; the "
	    "answers of the last changes are withdrawn");
}

/* 100 ms, doubling up to the cap; back to 100 ms once synchronized. */
static void
schedule_retry(struct nri *n)
{
	struct timeval	tv;
	int		max = n->srv->opts.nri_backoff_max_ms;
	int		ms;

	ms = n->backoff_ms < max ? n->backoff_ms : max;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(n->ev_retry, &tv);
	if (n->backoff_ms < max)
		n->backoff_ms *= 2;
}

static void
close_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nri	*n = arg;

	if (n->c == NULL || !n->c->dead)
		return;
	conn_free(n->c);
	n->c = NULL;
	/* Changes meanwhile are reconciled at the next Synchronize. */
	acc_reset(&n->queue);
	schedule_retry(n);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	nri_connect(arg);
}

/* A frame queued by reference, in slices: freed after the last one. */
struct frame_ref {
	uint8_t	*frame;
	int	 refs;
};

static void
frame_sent(const void *data, size_t len, void *arg)
{
	struct frame_ref	*ref = arg;

	(void)data;
	(void)len;
	if (--ref->refs == 0) {
		free(ref->frame);
		free(ref);
	}
}

/*
 * Frames one ttrpc message for a logical connection and queues it, taking
 * frame: its trunk frames' headers and slices of it go to the output as
 * they are (an update message is tens of KB; one more copy and its free
 * cost a share of a claim's prepare), and a long one's slices are not
 * even copied into the output (a Synchronize reply of megabytes).
 */
static void
conn_send(struct conn *c, uint32_t id, uint8_t *frame, size_t len)
{
	struct mux_frames fr;
	struct frame_ref *ref;
	struct evbuffer	*out;
	int		 i, rc;

	if (c->dead) {
		free(frame);
		return;
	}
	if ((rc = mux_frames(id, frame, len, &fr)) != 0) {
		free(frame);
		conn_fail(c, "nri_protocol", "cannot frame a message: %s",
		    strerror(-rc));
		return;
	}
	out = bufferevent_get_output(c->bev);
	/* A long frame is queued where it is, and goes when the last of its
	 * slices has been written. */
	ref = NULL;
	if (len >= NRI_SEND_BY_REFERENCE) {
		ref = xmalloc(sizeof *ref);
		ref->frame = frame;
		ref->refs = 1;		/* ours, until queued */
	}
	for (i = 0; i < fr.n && rc == 0; i++) {
		if (evbuffer_add(out, fr.hdr[i], MUX_HEADER_SIZE) != 0)
			rc = -1;
		else if (ref == NULL)
			rc = evbuffer_add(out, fr.data[i], fr.len[i]);
		else {
			ref->refs++;
			if ((rc = evbuffer_add_reference(out, fr.data[i],
			    fr.len[i], frame_sent, ref)) != 0)
				ref->refs--;
		}
	}
	if (ref != NULL)
		frame_sent(NULL, 0, ref);
	else
		free(frame);
	if (rc != 0) {
		/* Part of a message may be queued: the trunk is lost. */
		conn_fail(c, NULL, "cannot queue %zu bytes", len);
		return;
	}
	if (evbuffer_get_length(out) > NRI_MAX_OUTPUT)
		conn_fail(c, "nri_timeout", "the runtime does not read: over "
		    "%u bytes queued", NRI_MAX_OUTPUT);
}

/* Answers on connection 1; -EMSGSIZE leaves the caller to decide. */
static int
reply_msg(struct call *call, const ProtobufCMessage *msg)
{
	uint8_t	*f;
	size_t	 len;
	int	 rc;

	if ((rc = ttrpc_response_pack(call->stream, msg, &f, &len)) != 0)
		return (rc);
	conn_send(call->c, MUX_PLUGIN_CONN, f, len);
	return (0);
}

static void reply_error(struct call *, int, const char *, ...)
    __attribute__((__format__(__printf__, 3, 4)));

static void
reply_error(struct call *call, int code, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;
	uint8_t	*f;
	size_t	 len;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (ttrpc_error_pack(call->stream, code, msg, &f, &len) == 0)
		conn_send(call->c, MUX_PLUGIN_CONN, f, len);
	else
		conn_fail(call->c, "nri_protocol", "cannot answer %s",
		    call->method);
	free(msg);
}

static void
reply_ok(struct call *call, const ProtobufCMessage *msg)
{
	if (reply_msg(call, msg) != 0)
		reply_error(call, TTRPC_RESOURCE_EXHAUSTED, "%s: the reply "
		    "would be over %u bytes", call->method, TTRPC_MAX_DATA);
}

static void
pending_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pending	*p = arg;
	struct nri	*n = p->c->n;

	if (p->kind == PENDING_REGISTER) {
		conn_fail(p->c, "nri_timeout", "no answer to RegisterPlugin "
		    "within %d ms", NRI_REGISTER_TIMEOUT_MS);
		return;
	}
	/* Freed when a late answer comes or the connection goes. */
	p->expired = 1;
	log_warnx("NRI: no answer to UpdateContainers of %d containers "
	    "within %lld ms", p->nupdates, p->c->request_timeout_ms);
	n->failed_updates += (unsigned long)p->nupdates;
	metrics_inc("nri_update_failures", NULL, NULL);
	metrics_inc("errors", "kind", "nri_timeout");
	round_left(p->c, p, 1);
}

/* A stream id for a request of ours on connection 2, or 0 when none may
 * be sent (the connection failed, or is failed here). */
static int
request_stream(struct conn *c, uint32_t *id)
{
	if (c->dead)
		return (0);
	if (c->npending >= NRI_MAX_PENDING) {
		conn_fail(c, "nri_timeout", "the runtime leaves %d requests "
		    "unanswered", c->npending);
		return (0);
	}
	if (ttrpc_streams_next(&c->cli, id) != 0) {
		conn_fail(c, "nri_protocol", "stream ids used up");
		return (0);
	}
	return (1);
}

/* Sends the frame of our request on stream id (taking it) and remembers
 * the request until its answer or its timeout. */
static void
request_sent(struct conn *c, uint32_t id, uint8_t *f, size_t len,
    long long timeout_ms, enum pending_kind kind, int nupdates)
{
	struct pending	*p;
	struct timeval	 tv;

	p = xcalloc(1, sizeof *p);
	p->c = c;
	p->stream = id;
	p->kind = kind;
	p->nupdates = nupdates;
	p->timer = evtimer_new(bufferevent_get_base(c->bev),
	    pending_timeout_cb, p);
	if (p->timer == NULL) {
		free(p);
		free(f);
		conn_fail(c, NULL, "cannot arm a timer");
		return;
	}
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(p->timer, &tv);
	TAILQ_INSERT_TAIL(&c->pending, p, entry);
	c->npending++;
	conn_send(c, MUX_RUNTIME_CONN, f, len);
}

/* Sends a request of ours on connection 2 and remembers it. */
static void
send_request(struct conn *c, const char *method, const ProtobufCMessage *msg,
    long long timeout_ms, enum pending_kind kind, int nupdates)
{
	uint32_t	 id;
	uint8_t		*f;
	size_t		 len;
	int		 rc;

	if (!request_stream(c, &id))
		return;
	if ((rc = ttrpc_request_pack(id, NRI_SERVICE_RUNTIME, method, msg,
	    timeout_ms * 1000000LL, &f, &len)) != 0) {
		conn_fail(c, "nri_protocol", "cannot build %s: %s", method,
		    strerror(-rc));
		return;
	}
	request_sent(c, id, f, len, timeout_ms, kind, nupdates);
}

static void
send_register(struct conn *c)
{
	NRI(RegisterPluginRequest)	req =
	    NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
	char				idx[16];

	snprintf(idx, sizeof idx, "%02d", c->n->srv->opts.nri_index);
	req.plugin_name = (char *)NRI_PLUGIN_NAME;
	req.plugin_idx = idx;
	send_request(c, "RegisterPlugin", &req.base, NRI_REGISTER_TIMEOUT_MS,
	    PENDING_REGISTER, 0);
}

/* Sends what waits in the queue, once the runtime is ready for it. */
static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct nri			*n = arg;
	struct conn			*c = n->c;
	struct nri_updates		 us;
	size_t				*sizes, off, k, i, used, flen;
	uint8_t				*f, *p, *end;
	uint32_t			 id;
	int				 rc;

	if (c == NULL || c->dead) {
		acc_reset(&n->queue);
		return;
	}
	if (!c->registered || !c->synchronized || acc_count(&n->queue) == 0)
		return;
	/* The round out first: its end calls again. */
	if (c->round > 0)
		return;
	/*
	 * Nor while a loop turn's answers wait for its journal sync: they
	 * would wait for this work too, and the push cannot leave before
	 * them anyway (the gate). nri_turn_done calls again once they are
	 * out.
	 */
	if (gate_held(n->srv->gate))
		return;
	nri_updates_init(&us);
	acc_updates(&n->queue, n->srv->policy, &us);
	acc_reset(&n->queue);
	/* Each update is sized once, and packed once (nriupd.c). */
	sizes = updates_sizes(&us);
	for (off = 0; off < us.n && !c->dead; off += k) {
		k = us.n - off;
		if (k > NRI_UPDATES_PER_REQUEST)
			k = NRI_UPDATES_PER_REQUEST;
		if ((k = updates_fit(sizes + off, k, NRI_PUSH_BYTES,
		    &used)) == 0) {
			k = 1;
			used = sizes[off];
		}
		/* Written once, in the request's frame. */
		if (!request_stream(c, &id))
			break;
		if ((rc = ttrpc_request_frame(id, NRI_SERVICE_RUNTIME,
		    "UpdateContainers", used, c->request_timeout_ms *
		    1000000LL, &f, &flen, &p)) != 0) {
			conn_fail(c, "nri_protocol", "cannot build "
			    "UpdateContainers: %s", strerror(-rc));
			break;
		}
		end = p + used;
		for (i = off; i < off + k; i++)
			p = nri_updates_put(&us, i, 1, p);
		if (p != end) {
			free(f);
			conn_fail(c, "nri_protocol", "UpdateContainers: the "
			    "updates took other than their size");
			break;
		}
		log_debug("NRI: pushing updates of %zu containers", k);
		request_sent(c, id, f, flen, c->request_timeout_ms,
		    PENDING_UPDATE, (int)k);
		if (c->dead)
			break;
		TAILQ_LAST(&c->pending, pendings)->in_round = 1;
		c->round++;
		for (i = off; i < off + k; i++)
			round_add(c, nri_updates_id(&us, i));
	}
	free(sizes);
	nri_updates_clear(&us);
}

static void
update_answered(struct conn *c, struct pending *p, Ttrpc__Response *resp)
{
	NRI(UpdateContainersResponse)	*r;
	ProtobufCMessage		*m;
	struct nri			*n = c->n;
	char				*cause = NULL;
	size_t				 i;
	int				 code;

	if ((code = ttrpc_response_code(resp)) != TTRPC_OK) {
		log_warnx("NRI: the runtime failed UpdateContainers of %d "
		    "containers: %s: %s", p->nupdates, ttrpc_code_name(code),
		    resp->status->message);
		n->failed_updates += (unsigned long)p->nupdates;
		metrics_inc("nri_update_failures", NULL, NULL);
		metrics_inc("errors", "kind", "nri_update");
		return;
	}
	if (ttrpc_payload_unpack(
	    &nri__pkg__api__v1alpha1__update_containers_response__descriptor,
	    &resp->payload, &m, NULL, &cause) != 0) {
		conn_fail(c, "nri_protocol", "UpdateContainers answer: %s",
		    cause);
		free(cause);
		return;
	}
	r = (NRI(UpdateContainersResponse) *)m;
	for (i = 0; i < r->n_failed; i++) {
		log_warnx("NRI: the runtime could not update container %s",
		    r->failed[i]->container_id);
		n->failed_updates++;
		metrics_inc("nri_update_failures", NULL, NULL);
		metrics_inc("errors", "kind", "nri_update");
	}
	protobuf_c_message_free_unpacked(m, NULL);
}

/* Connection 2: answers to RegisterPlugin and UpdateContainers. */
static int
runtime_frame(const struct ttrpc_frame *f, void *arg)
{
	struct conn	*c = arg;
	struct pending	*p;
	Ttrpc__Response	*resp;
	char		*cause = NULL;
	int		 code;

	if (c->dead)
		return (-ECONNABORTED);
	if (f->type != TTRPC_RESPONSE) {
		log_debug("NRI: ignoring a frame of type %u on connection 2",
		    f->type);
		return (0);
	}
	TAILQ_FOREACH(p, &c->pending, entry)
		if (p->stream == f->stream)
			break;
	if (p == NULL) {
		log_debug("NRI: an answer to no request of ours (stream %u)",
		    f->stream);
		return (0);
	}
	TAILQ_REMOVE(&c->pending, p, entry);
	c->npending--;
	if (ttrpc_response_unpack(f, &resp, &cause) != 0) {
		conn_fail(c, "nri_protocol", "%s", cause);
		free(cause);
		pending_free(p);
		return (-EBADMSG);
	}
	switch (p->kind) {
	case PENDING_REGISTER:
		if ((code = ttrpc_response_code(resp)) != TTRPC_OK) {
			conn_fail(c, "nri_connect", "the runtime refused to "
			    "register us: %s: %s", ttrpc_code_name(code),
			    resp->status->message);
			break;
		}
		c->registered = 1;
		log_info("NRI: registered as %s, index %02d", NRI_PLUGIN_NAME,
		    c->n->srv->opts.nri_index);
		break;
	case PENDING_UPDATE:
		if (p->expired)
			log_debug("NRI: a late answer to UpdateContainers");
		else
			update_answered(c, p, resp);
		break;
	}
	ttrpc__response__free_unpacked(resp, NULL);
	/* With no round out, it lets the queue go. */
	if (!c->dead)
		round_left(c, p, 0);
	pending_free(p);
	if (c->dead)
		return (-ECONNABORTED);
	return (0);
}

/*
 * Releases one container; the updates of others go to *a (the reply or
 * the queue, whichever the event allows).
 */
static void
release(struct nri *n, const char *id, struct acc *a)
{
	struct policy_effects	 fx;
	char			*cause = NULL;

	table_del(n, id);
	acc_drop(a, id);
	if (policy_pinning(n->srv->policy, id) == NULL)
		return;
	policy_effects_init(&fx);
	if (server_remove(n->srv, id, &fx, &cause) != 0) {
		log_warnx("NRI: container %s: %s", id, cause);
		free(cause);
	} else
		acc_merge(a, fx.updates, fx.nupdates);
	policy_effects_clear(&fx);
}

/* The runtime started a container: a cold start begins (updates none). */
static void
started(struct nri *n, const char *id)
{
	struct policy_effects	 fx;
	char			*cause = NULL;

	if (!policy_start_begins(n->srv->policy, id))
		return;
	policy_effects_init(&fx);
	if (server_started(n->srv, id, &fx, &cause) != 0) {
		log_warnx("NRI: container %s started: %s", id, cause);
		free(cause);
	}
	policy_effects_clear(&fx);
}

static int
str_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static void
release_pod(struct nri *n, const char *pod, struct acc *a)
{
	struct ctrlist	 *l;
	struct ctr	 *t;
	char		**ids;
	size_t		  i, m = 0;

	if (pod == NULL || *pod == '\0' || (l = strmap_get(n->pods, pod)) ==
	    NULL)
		return;
	TAILQ_FOREACH(t, l, in_pod)
		m++;
	/* release() takes each out of the list: the ids are copied first. */
	ids = xcalloc(m, sizeof *ids);
	m = 0;
	TAILQ_FOREACH(t, l, in_pod)
		ids[m++] = xstrdup(t->id);
	qsort(ids, m, sizeof *ids, str_cmp);
	for (i = 0; i < m; i++) {
		release(n, ids[i], a);
		free(ids[i]);
	}
	free(ids);
}

/* For replies that cannot carry updates: they are pushed after. */
static void queue_id(struct nri *, const char *);

static void
push_acc(struct nri *n, const struct acc *a)
{
	int	i;

	for (i = 0; i < a->n; i++)
		if (a->ids[i] != NULL)
			queue_id(n, a->ids[i]);
}

/*
 * Sends resp (its other fields set) with its update list filled from a,
 * as far as one message holds them; the rest is pushed after the reply.
 */
static void
reply_updates(struct call *call, ProtobufCMessage *resp, size_t *n_update,
    NRI(ContainerUpdate) ***update, const struct acc *a)
{
	const ProtobufCFieldDescriptor	*fd;
	struct nri_updates		 us;
	size_t				*sizes, fixed, i, k = 0, used = 0;
	uint8_t				*p, *f, *end;
	size_t				 len;

	*n_update = 0;
	*update = NULL;
	nri_updates_init(&us);
	acc_updates(a, call->c->n->srv->policy, &us);
	sizes = updates_sizes(&us);
	fixed = protobuf_c_message_get_packed_size(resp);
	if (fixed < NRI_REPLY_BYTES)
		k = updates_fit(sizes, us.n, NRI_REPLY_BYTES - fixed, &used);
	/* The reply without its updates, then theirs (nriupd.h). */
	fd = protobuf_c_message_descriptor_get_field_by_name(
	    resp->descriptor, "update");
	if (fd == NULL || fd->id > 15)
		k = used = 0;
	/* Written once, in the reply's frame. */
	if (ttrpc_response_frame(call->stream, fixed + used, &f, &len,
	    &p) == 0) {
		end = p + fixed + used;
		p += protobuf_c_message_pack(resp, p);
		for (i = 0; i < k; i++)
			p = nri_updates_put(&us, i, (int)fd->id, p);
		if (p == end)
			conn_send(call->c, MUX_PLUGIN_CONN, f, len);
		else {
			free(f);
			conn_fail(call->c, "nri_protocol", "%s: the reply's "
			    "updates took other than their size", call->method);
		}
	} else
		reply_error(call, TTRPC_RESOURCE_EXHAUSTED, "%s: the reply "
		    "would be over %u bytes", call->method, TTRPC_MAX_DATA);
	free(sizes);
	if (k < us.n)
		log_info("NRI: %zu updates do not fit the %s reply; they "
		    "follow in UpdateContainers", us.n - k, call->method);
	for (i = k; i < us.n; i++)
		queue_id(call->c->n, nri_updates_id(&us, i));
	/* A container the round still pushes goes again after it: the
	 * runtime may apply that push after this reply. */
	for (i = 0; i < k && call->c->round_n > 0; i++)
		if (round_has(call->c, nri_updates_id(&us, i)))
			queue_id(call->c->n, nri_updates_id(&us, i));
	nri_updates_clear(&us);
}

/* The runtime's requests, one handler each; each answers exactly once. */
static void
h_configure(struct call *call, ProtobufCMessage **msg)
{
	NRI(ConfigureRequest)	*req = (NRI(ConfigureRequest) *)*msg;
	NRI(ConfigureResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;

	log_info("NRI: configured by %s %s (NRI %s), request timeout %lld ms",
	    *req->runtime_name ? req->runtime_name : "a runtime",
	    req->runtime_version, *req->nri_version ? req->nri_version : "?",
	    (long long)req->request_timeout);
	if (req->request_timeout > 0 && req->request_timeout < 3600000)
		call->c->request_timeout_ms = req->request_timeout;
	resp.events = NRI_EVENTS;
	reply_ok(call, &resp.base);
}

static void
sync_reset(struct conn *c)
{
	int	i;

	for (i = 0; i < c->nparts; i++)
		pbarena_free(c->parts_mem[i]);
	free(c->parts);
	free(c->parts_mem);
	c->parts = NULL;
	c->parts_mem = NULL;
	c->nparts = 0;
	c->sync_pods = c->sync_ctrs = 0;
}

static int
pod_cmp(const void *a, const void *b)
{
	return (strcmp((*(NRI(PodSandbox) *const *)a)->id,
	    (*(NRI(PodSandbox) *const *)b)->id));
}

static NRI(PodSandbox) *
pod_find(NRI(PodSandbox) **pods, size_t n, const char *id)
{
	NRI(PodSandbox)	 key, *kp = &key, **found;

	key.id = (char *)id;
	found = bsearch(&kp, pods, n, sizeof *pods, pod_cmp);
	return (found != NULL ? *found : NULL);
}

/* The last part of a Synchronize: the whole list goes to the policy. */
static void
sync_finish(struct call *call)
{
	struct conn			*c = call->c;
	struct nri			*n = c->n;
	NRI(SynchronizeResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
	NRI(PodSandbox)			**pods;
	NRI(Container)			**ctrs, *ct;
	struct nri_spec			 one;
	struct nri_spec_arrays		*own;
	struct container_spec		*cs;
	struct policy_effects		 fx;
	struct acc			 a;
	const struct pinning		*p;
	struct strmap			*seen;
	char				*cause = NULL;
	size_t				 i, j, np = 0, k = 0;
	int				 rc;

	pods = xcalloc(c->sync_pods + 1, sizeof *pods);
	ctrs = xcalloc(c->sync_ctrs + 1, sizeof *ctrs);
	/* The specs side by side, as server_sync takes them; the arrays
	 * each owns beside them. */
	own = xcalloc(c->sync_ctrs + 1, sizeof *own);
	cs = xcalloc(c->sync_ctrs + 1, sizeof *cs);
	for (i = 0; i < (size_t)c->nparts; i++)
		for (j = 0; j < c->parts[i]->n_pods; j++)
			if (c->parts[i]->pods[j] != NULL)
				pods[np++] = c->parts[i]->pods[j];
	qsort(pods, np, sizeof *pods, pod_cmp);

	seen = strmap_new_borrowing();
	strmap_reserve(seen, c->sync_ctrs);
	for (i = 0; i < (size_t)c->nparts; i++) {
		for (j = 0; j < c->parts[i]->n_containers; j++) {
			ct = c->parts[i]->containers[j];
			/* A stopped container holds no CPUs. */
			if (ct == NULL || *ct->id == '\0' ||
			    ct->state == CONTAINER_STOPPED)
				continue;
			if (strmap_get(seen, ct->id) != NULL) {
				log_debug("NRI: container %s listed twice",
				    ct->id);
				continue;
			}
			strmap_put(seen, ct->id, ct);
			nri_spec_init(&one,
			    pod_find(pods, np, ct->pod_sandbox_id), ct);
			cs[k] = one.spec;
			own[k] = one.own;
			ctrs[k] = ct;
			k++;
		}
	}
	strmap_free(seen);

	policy_effects_init(&fx);
	acc_init(&a);
	if ((rc = server_sync(n->srv, cs, (int)k, &fx, &cause)) != 0) {
		log_warnx("NRI: synchronization refused: %s", cause);
		set_error(n, cause);
		reply_error(call, TTRPC_UNKNOWN, "%s", cause);
		free(cause);
		goto out;
	}
	/*
	 * Besides what the policy changed, every container whose cpuset or
	 * mems the runtime reports otherwise than we pin it: an update lost
	 * while we were away, or one made while we were not running.
	 */
	acc_merge(&a, fx.updates, fx.nupdates);
	for (i = 0; i < k; i++) {
		if (acc_has(&a, cs[i].id) ||
		    (p = policy_pinning(n->srv->policy, cs[i].id)) == NULL)
			continue;
		if (nri_msg_differs(ctrs[i], p))
			acc_add(&a, p->id);
	}
	/* Running containers we had not seen start: their cold starts, if
	 * any, begin now. */
	for (i = 0; i < k; i++)
		if (ctrs[i]->state == CONTAINER_RUNNING)
			started(n, cs[i].id);
	c->synchronized = 1;
	/* What was queued before is in a now, as far as it matters. */
	acc_reset(&n->queue);
	reply_updates(call, &resp.base, &resp.n_update, &resp.update, &a);

	table_clear(n);
	strmap_reserve(n->ctrs, k);
	strmap_reserve(n->pods, np);
	for (i = 0; i < k; i++)
		table_put(n, cs[i].id, cs[i].pod);
	n->backoff_ms = NRI_BACKOFF_MIN_MS;
	set_error(n, NULL);
	metrics_inc("nri_syncs", NULL, NULL);
	log_info("NRI: synchronized: %zu pods, %zu containers, %zu updated "
	    "(%d parts)", np, k, acc_count(&a), c->nparts);
out:
	acc_clear(&a);
	policy_effects_clear(&fx);
	for (i = 0; i < k; i++)
		nri_spec_arrays_clear(&own[i]);
	free(own);
	free(cs);
	free(ctrs);
	free(pods);
}

static void
h_synchronize(struct call *call, ProtobufCMessage **msg)
{
	struct conn			*c = call->c;
	NRI(SynchronizeRequest)		*req = (NRI(SynchronizeRequest) *)*msg;
	NRI(SynchronizeResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
	struct prefault			*pf;
	size_t				 held;

	if (c->nparts == 0)
		c->synchronized = 0;
	c->sync_pods += req->n_pods;
	c->sync_ctrs += req->n_containers;
	if (c->sync_pods > NRI_MAX_SYNC_PODS ||
	    c->sync_ctrs > NRI_MAX_SYNC_CONTAINERS ||
	    c->nparts >= NRI_MAX_SYNC_PARTS) {
		reply_error(call, TTRPC_RESOURCE_EXHAUSTED, "Synchronize: more "
		    "than %d pods or containers, or %d parts",
		    NRI_MAX_SYNC_CONTAINERS, NRI_MAX_SYNC_PARTS);
		sync_reset(c);
		return;
	}
	/* Kept whole until the last part: the specs point into it. */
	c->parts = xreallocarray(c->parts, (size_t)c->nparts + 1,
	    sizeof *c->parts);
	c->parts_mem = xreallocarray(c->parts_mem, (size_t)c->nparts + 1,
	    sizeof *c->parts_mem);
	c->parts_mem[c->nparts] = call->mem;
	c->parts[c->nparts++] = req;
	*msg = NULL;
	call->mem = NULL;
	if (req->more) {
		/* The runtime insists: more echoed, no updates. */
		resp.more = 1;
		reply_ok(call, &resp.base);
		return;
	}
	/* Room for what the policy makes of the containers it did not hold
	 * (after a restart it holds them all), filled at once. */
	held = (size_t)policy_ncontainers(c->n->srv->policy);
	pf = prefault_heap(c->sync_ctrs > held ?
	    (c->sync_ctrs - held) * NRI_SYNC_HEAP_PER_CONTAINER : 0);
	if (prefault_filled(pf) > 0)
		log_debug("NRI: %zu KiB of heap filled (%zu KiB of it in huge "
		    "pages) for a Synchronize of %zu containers",
		    prefault_filled(pf) >> 10, prefault_huge(pf) >> 10,
		    c->sync_ctrs);
	sync_finish(call);
	prefault_done(pf);
	sync_reset(c);
}

static void
h_shutdown(struct call *call, ProtobufCMessage **msg)
{
	NRI(Empty)	resp = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;

	log_info("NRI: the runtime asks us to shut down; reconnecting later");
	reply_ok(call, &resp.base);
	call->c->shutdown = 1;
}

static int
need_container(struct call *call, const NRI(Container) *ct)
{
	if (ct == NULL || *ct->id == '\0') {
		reply_error(call, TTRPC_INVALID_ARGUMENT, "%s: no container",
		    call->method);
		return (0);
	}
	return (1);
}

/* Creates the container of spec (the request's) and answers the runtime. */
static void
create_answer(struct call *call, const struct container_spec *spec)
{
	NRI(CreateContainerResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT;
	struct nri			*n = call->c->n;
	struct nri_adjust		 adj;
	struct policy_effects		 fx;
	struct acc			 a;
	char				*cause = NULL;

	policy_effects_init(&fx);
	if (server_create(n->srv, spec, &fx, &cause) != 0) {
		log_warnx("NRI: container %s refused: %s", spec->id, cause);
		reply_error(call, TTRPC_UNKNOWN, "%s", cause);
		free(cause);
		goto out;
	}
	table_put(n, spec->id, spec->pod);
	memset(&adj, 0, sizeof adj);
	if (fx.self.id != NULL && nri_adjust_init(&adj, &fx.self))
		resp.adjust = &adj.adj;
	acc_init(&a);
	acc_merge(&a, fx.updates, fx.nupdates);
	reply_updates(call, &resp.base, &resp.n_update, &resp.update, &a);
	acc_clear(&a);
	nri_adjust_clear(&adj);
out:
	policy_effects_clear(&fx);
}

/* The reads ended, or the time is up: the create goes ahead on what the
 * policy knows now. Reads still going on pin the container later, by an
 * update, when they name its pod. */
static void
deferred_answer(struct deferred *d)
{
	struct call	call;
	struct nri_spec	ns;

	call.c = d->c;
	call.stream = d->stream;
	call.method = "CreateContainer";
	call.mem = NULL;
	if (!d->c->dead) {
		nri_spec_init(&ns, d->req->pod, d->req->container);
		create_answer(&call, &ns.spec);
		nri_spec_clear(&ns);
	}
	metrics_observe("nri_request", elapsed(&d->t0));
	deferred_free(d);
}

static void
deferred_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deferred	*d = arg;

	log_info("NRI: container %s: no answer from the API server within "
	    "%d ms on the claims it names; created without them for now",
	    d->req->container->id, CLAIMCHECK_ANSWER_MS);
	deferred_answer(d);
}

static void
deferred_read_cb(void *arg, struct claimcheck_wait *w)
{
	struct deferred	*d = arg;
	int		 i;

	for (i = 0; i < d->nwaits; i++)
		if (d->waits[i] == w) {
			d->waits[i] = d->waits[--d->nwaits];
			break;
		}
	if (d->nwaits == 0)
		deferred_answer(d);
}

/*
 * 1 when the create waits for claims to be read again: its container
 * names held claims that its pod is not known to consume, and the pod may
 * have joined them after they were prepared (the kubelet prepares a
 * claim once). The request then belongs to the deferred create.
 */
static int
create_defer(struct call *call, NRI(CreateContainerRequest) *req,
    const struct container_spec *spec)
{
	struct nri	*n = call->c->n;
	struct deferred	*d;
	struct timeval	 tv;
	char		**uids;
	int		 i, nu;

	if (n->srv->claimcheck == NULL ||
	    call->c->ndeferred >= NRI_MAX_DEFERRED)
		return (0);
	if ((nu = policy_claims_unverified(n->srv->policy, spec, &uids)) == 0)
		return (0);
	d = xcalloc(1, sizeof *d);
	d->c = call->c;
	d->stream = call->stream;
	clock_gettime(CLOCK_MONOTONIC, &d->t0);
	TAILQ_INSERT_TAIL(&call->c->deferred, d, entry);
	call->c->ndeferred++;
	for (i = 0; i < nu; i++) {
		if (d->nwaits < POLICY_MAX_CLAIM_ENV &&
		    (d->waits[d->nwaits] = claimcheck_read(n->srv->claimcheck,
		    uids[i], deferred_read_cb, d)) != NULL)
			d->nwaits++;
		free(uids[i]);
	}
	free(uids);
	if (d->nwaits == 0) {
		deferred_free(d);
		return (0);
	}
	d->req = req;
	d->mem = call->mem;
	call->mem = NULL;
	d->timer = evtimer_new(n->srv->base, deferred_timeout_cb, d);
	tv.tv_sec = CLAIMCHECK_ANSWER_MS / 1000;
	tv.tv_usec = (CLAIMCHECK_ANSWER_MS % 1000) * 1000;
	if (d->timer == NULL || evtimer_add(d->timer, &tv) != 0)
		fatalx("cannot arm a timer");
	log_debug("NRI: container %s waits for %d claim%s to be read again",
	    req->container->id, d->nwaits, d->nwaits == 1 ? "" : "s");
	return (1);
}

static void
h_create(struct call *call, ProtobufCMessage **msg)
{
	NRI(CreateContainerRequest)	*req =
	    (NRI(CreateContainerRequest) *)*msg;
	struct nri_spec			 ns;

	if (!need_container(call, req->container))
		return;
	nri_spec_init(&ns, req->pod, req->container);
	if (create_defer(call, req, &ns.spec))
		*msg = NULL;
	else
		create_answer(call, &ns.spec);
	nri_spec_clear(&ns);
}

static void
h_update(struct call *call, ProtobufCMessage **msg)
{
	NRI(UpdateContainerRequest)	*req =
	    (NRI(UpdateContainerRequest) *)*msg;
	NRI(UpdateContainerResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINER_RESPONSE__INIT;
	struct nri			*n = call->c->n;
	struct policy_effects		 fx;
	struct acc			 a;
	long long			 request, limit;
	char				*cause = NULL;

	if (!need_container(call, req->container))
		return;
	if (policy_pinning(n->srv->policy, req->container->id) == NULL) {
		log_debug("NRI: update of container %s, not ours",
		    req->container->id);
		reply_ok(call, &resp.base);
		return;
	}
	nri_msg_update_cpu(req, &request, &limit);
	policy_effects_init(&fx);
	if (server_update(n->srv, req->container->id, request, limit,
	    nri_msg_update_mem(req), &fx, &cause) != 0) {
		log_warnx("NRI: update of container %s refused: %s",
		    req->container->id, cause);
		reply_error(call, TTRPC_UNKNOWN, "%s", cause);
		free(cause);
		policy_effects_clear(&fx);
		return;
	}
	/* Its own new pinning first: the reply is how it gets it. */
	acc_init(&a);
	if (fx.self.id != NULL)
		acc_add(&a, fx.self.id);
	acc_merge(&a, fx.updates, fx.nupdates);
	reply_updates(call, &resp.base, &resp.n_update, &resp.update, &a);
	acc_clear(&a);
	policy_effects_clear(&fx);
}

static void
h_stop(struct call *call, ProtobufCMessage **msg)
{
	NRI(StopContainerRequest)	*req =
	    (NRI(StopContainerRequest) *)*msg;
	NRI(StopContainerResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__STOP_CONTAINER_RESPONSE__INIT;
	struct acc			 a;

	if (!need_container(call, req->container))
		return;
	acc_init(&a);
	release(call->c->n, req->container->id, &a);
	reply_updates(call, &resp.base, &resp.n_update, &resp.update, &a);
	acc_clear(&a);
}

static void
h_remove(struct call *call, ProtobufCMessage **msg)
{
	NRI(RemoveContainerRequest)	*req =
	    (NRI(RemoveContainerRequest) *)*msg;
	NRI(RemoveContainerResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__REMOVE_CONTAINER_RESPONSE__INIT;
	struct acc			 a;

	if (!need_container(call, req->container))
		return;
	acc_init(&a);
	release(call->c->n, req->container->id, &a);
	reply_ok(call, &resp.base);
	push_acc(call->c->n, &a);
	acc_clear(&a);
}

static void
h_remove_pod(struct call *call, ProtobufCMessage **msg)
{
	NRI(RemovePodSandboxRequest)	*req =
	    (NRI(RemovePodSandboxRequest) *)*msg;
	NRI(RemovePodSandboxResponse)	 resp =
	    NRI__PKG__API__V1ALPHA1__REMOVE_POD_SANDBOX_RESPONSE__INIT;
	struct acc			 a;

	acc_init(&a);
	if (req->pod != NULL)
		release_pod(call->c->n, req->pod->id, &a);
	reply_ok(call, &resp.base);
	push_acc(call->c->n, &a);
	acc_clear(&a);
}

/* Runtimes before NRI v0.12 send most events this way. */
static void
h_state_change(struct call *call, ProtobufCMessage **msg)
{
	NRI(StateChangeEvent)	*ev = (NRI(StateChangeEvent) *)*msg;
	NRI(Empty)		 resp = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;
	struct nri		*n = call->c->n;
	struct acc		 a;

	acc_init(&a);
	switch (ev->event) {
	case EV(START_CONTAINER):
		if (ev->container != NULL && *ev->container->id != '\0')
			started(n, ev->container->id);
		break;
	case EV(STOP_CONTAINER):
	case EV(REMOVE_CONTAINER):
		if (ev->container != NULL && *ev->container->id != '\0')
			release(n, ev->container->id, &a);
		break;
	case EV(REMOVE_POD_SANDBOX):
		if (ev->pod != NULL)
			release_pod(n, ev->pod->id, &a);
		break;
	default:
		log_debug("NRI: state change %d ignored", (int)ev->event);
		break;
	}
	reply_ok(call, &resp.base);
	push_acc(n, &a);
	acc_clear(&a);
}

struct method {
	const char				*name;
	const char				*word;	/* metrics label */
	const ProtobufCMessageDescriptor	*desc;
	void	(*fn)(struct call *, ProtobufCMessage **);
};

static const struct method methods[] = {
	{ "Configure", "configure",
	  &nri__pkg__api__v1alpha1__configure_request__descriptor,
	  h_configure },
	{ "Synchronize", "synchronize",
	  &nri__pkg__api__v1alpha1__synchronize_request__descriptor,
	  h_synchronize },
	{ "Shutdown", "shutdown",
	  &nri__pkg__api__v1alpha1__empty__descriptor,
	  h_shutdown },
	{ "CreateContainer", "create_container",
	  &nri__pkg__api__v1alpha1__create_container_request__descriptor,
	  h_create },
	{ "UpdateContainer", "update_container",
	  &nri__pkg__api__v1alpha1__update_container_request__descriptor,
	  h_update },
	{ "StopContainer", "stop_container",
	  &nri__pkg__api__v1alpha1__stop_container_request__descriptor,
	  h_stop },
	{ "RemoveContainer", "remove_container",
	  &nri__pkg__api__v1alpha1__remove_container_request__descriptor,
	  h_remove },
	{ "RemovePodSandbox", "remove_pod_sandbox",
	  &nri__pkg__api__v1alpha1__remove_pod_sandbox_request__descriptor,
	  h_remove_pod },
	{ "StateChange", "state_change",
	  &nri__pkg__api__v1alpha1__state_change_event__descriptor,
	  h_state_change },
};

/*
 * A Synchronize's payload unpacked for the fields we read (pbpick.h), in
 * an arena (*mem) of its own: 0, or PBPICK_FALLBACK and nothing kept
 * when protobuf-c must unpack it.
 */
static int
sync_pick(const struct pbpick *pk, const ProtobufCBinaryData *payload,
    ProtobufCMessage **msg, struct pbarena **mem)
{
	struct pbarena	*a;
	const char	*why;

	/* The arena protobuf-c's unpacking gets, though this takes less:
	 * from a MiB up its first block is mapped in huge pages, a fault or
	 * two where the heap's pages would fault one by one (the heap is
	 * filled only later, in h_synchronize). */
	a = ttrpc_payload_arena(payload, 1);
	if (pbpick_unpack(pk, payload->data, payload->len, a, msg,
	    &why) != 0) {
		log_debug("NRI: Synchronize unpacked whole: %s", why);
		metrics_inc("nri_syncs_unpacked_whole", NULL, NULL);
		pbarena_free(a);
		return (PBPICK_FALLBACK);
	}
	*mem = a;
	return (0);
}

static void
handle_request(struct conn *c, uint32_t stream, const Ttrpc__Request *req)
{
	const struct method	*m = NULL;
	struct call		 call;
	struct timespec		 t0;
	ProtobufCMessage	*msg = NULL;
	ProtobufCBinaryData	 payload;
	uint8_t			*clean = NULL;
	char			*cause = NULL;
	size_t			 i;
	int			 rc, n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	call.c = c;
	call.stream = stream;
	call.method = req->method;
	call.mem = NULL;
	if (strcmp(req->service, NRI_SERVICE_PLUGIN) == 0) {
		for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
			if (strcmp(req->method, methods[i].name) == 0) {
				m = &methods[i];
				break;
			}
	}
	if (m == NULL) {
		/* A v0.12 runtime falls back to StateChange on this. */
		metrics_inc("nri_events", "event", "unimplemented");
		log_debug("NRI: %s/%s is not implemented", req->service,
		    req->method);
		reply_error(&call, TTRPC_UNIMPLEMENTED, "%s/%s not implemented",
		    req->service, req->method);
		goto out;
	}
	metrics_inc("nri_events", "event", m->word);
	payload = req->payload;
	/* A Synchronize's few fields we read, the bytes checked whole; what
	 * pbpick leaves to protobuf-c (NUL bytes, bytes it would refuse)
	 * goes on below as any message. */
	if (m->fn == h_synchronize && c->n->sync_pick != NULL &&
	    sync_pick(c->n->sync_pick, &payload, &msg, &call.mem) == 0)
		goto handle;
	/* protobuf-c would cut a string at a NUL byte: ids would merge. */
	rc = pbcheck_strings(m->desc, payload.data, payload.len, &cause);
	if (rc == -EILSEQ && m->fn == h_synchronize) {
		/*
		 * A Synchronize is the runtime's account of all it runs:
		 * refused for one pod's annotation, it would leave every
		 * container of the node unpinned, again at every attempt.
		 * Its NUL bytes are read as '?' (no key becomes one of ours,
		 * no id another's), and the log says where the first was.
		 */
		clean = xmalloc(payload.len);
		if ((n = pbcheck_scrub(m->desc, payload.data, clean,
		    payload.len, '?')) > 0) {
			log_warnx("NRI: Synchronize: %s; %d string%s with a "
			    "NUL byte read with '?' in its place", cause, n,
			    n == 1 ? "" : "s");
			metrics_inc("errors", "kind", "nri_protocol");
		}
		free(cause);
		cause = NULL;
		payload.data = clean;
		/* What else may be wrong with it, as with any message. */
		rc = pbcheck_strings(m->desc, clean, payload.len, &cause);
	}
	if (rc != 0 && rc != -EBADMSG) {
		log_warnx("NRI: %s refused: %s", m->name, cause);
		metrics_inc("errors", "kind", "nri_protocol");
		reply_error(&call, TTRPC_INVALID_ARGUMENT, "%s", cause);
		free(cause);
		free(clean);
		goto out;
	}
	/* A Synchronize is the runtime's account of a whole node, megabytes
	 * unpacked: its first pages come huge. Not one pod's create, whose
	 * annotations alone could then have the kernel compact memory for
	 * huge pages while the loop waits. */
	if (rc == 0)
		rc = m->fn == h_synchronize ?
		    ttrpc_payload_unpack_large(m->desc, &payload, &msg,
		    &call.mem, &cause) :
		    ttrpc_payload_unpack(m->desc, &payload, &msg, &call.mem,
		    &cause);
	if (rc != 0) {
		conn_fail(c, "nri_protocol", "%s: %s", m->name, cause);
		free(cause);
		free(clean);
		return;
	}
	free(clean);
handle:
	m->fn(&call, &msg);
	/* The message with it, unless the handler kept both. */
	pbarena_free(call.mem);
out:
	metrics_observe("nri_request", elapsed(&t0));
}

/* Answers a request refused before its method is known with an error
 * status, and frees why; the connection lives on unless the answer
 * could not be queued. */
static int
refuse_frame(struct conn *c, const struct ttrpc_frame *f, int code,
    char *why)
{
	struct call	call = { .c = c, .stream = f->stream, .method = "?" };

	reply_error(&call, code, "%s", why);
	free(why);
	return (c->dead ? -ECONNABORTED : 0);
}

/* Connection 1: the runtime's requests. */
static int
plugin_frame(const struct ttrpc_frame *f, void *arg)
{
	struct conn	*c = arg;
	Ttrpc__Request	*req;
	char		*why = NULL, *cause = NULL;
	int		 code, rc;

	if (c->dead)
		return (-ECONNABORTED);
	switch (ttrpc_server_check(&c->srv, f, &code, &why)) {
	case TTRPC_IGNORE:
		log_debug("NRI: ignoring a frame of type %u on connection 1",
		    f->type);
		return (0);
	case TTRPC_REJECT:
		if (f->oversize) {
			/* The runtime never sends this: it is not one. */
			conn_fail(c, "nri_protocol", "%s", why);
			free(why);
			return (-EMSGSIZE);
		}
		return (refuse_frame(c, f, code, why));
	case TTRPC_HANDLE:
		break;
	}
	/* The envelope's service and method are strings too. */
	if ((rc = pbcheck_strings(&ttrpc__request__descriptor, f->data,
	    f->len, &cause)) != 0 && rc != -EBADMSG)
		return (refuse_frame(c, f, TTRPC_INVALID_ARGUMENT, cause));
	if (rc != 0 || ttrpc_request_unpack(f, &req, &cause) != 0) {
		conn_fail(c, "nri_protocol", "%s", cause);
		free(cause);
		return (-EBADMSG);
	}
	handle_request(c, f->stream, req);
	ttrpc_request_free(req);
	return (c->dead ? -ECONNABORTED : 0);
}

static int
mux_data(uint32_t id, const uint8_t *p, size_t len, void *arg)
{
	struct conn		*c = arg;
	struct ttrpc_reader	*rd;
	char			*cause = NULL;
	int			 rc;

	if (c->dead)
		return (-ECONNABORTED);
	rd = id == MUX_PLUGIN_CONN ? c->rd_plugin : c->rd_runtime;
	if ((rc = ttrpc_reader_feed(rd, p, len, &cause)) != 0) {
		conn_fail(c, "nri_protocol", "connection %u: %s", id,
		    cause != NULL ? cause : strerror(-rc));
		free(cause);
	}
	return (rc);
}

static void
mux_error(uint32_t id, int error, const char *cause, void *arg)
{
	conn_fail(arg, "nri_protocol", "%s", cause);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct conn		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_iovec	 v[8];
	char			*cause = NULL;
	size_t			 done;
	int			 i, k;

	while (!c->dead && evbuffer_get_length(in) > 0) {
		k = evbuffer_peek(in, -1, NULL, v, 8);
		if (k > 8)
			k = 8;
		for (i = 0, done = 0; i < k && !c->dead; i++) {
			if (mux_feed(c->mux, v[i].iov_base, v[i].iov_len,
			    &cause) != 0) {
				conn_fail(c, "nri_protocol", "%s",
				    cause != NULL ? cause : "bad trunk frame");
				free(cause);
				break;
			}
			done += v[i].iov_len;
		}
		evbuffer_drain(in, c->dead ? evbuffer_get_length(in) : done);
	}
}

static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	if (c->shutdown && evbuffer_get_length(bufferevent_get_output(bev)) ==
	    0)
		conn_fail(c, NULL, "the runtime asked us to shut down");
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	int		 err = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_EOF) {
		if (mux_pending(c->mux) != 0)
			conn_fail(c, NULL, "the runtime closed the connection "
			    "in the middle of a frame");
		else
			conn_fail(c, NULL, "the runtime closed the connection");
	} else if (what & BEV_EVENT_ERROR)
		conn_fail(c, NULL, "%s", evutil_socket_error_to_string(err));
}

static struct conn *
conn_new(struct nri *n, int fd)
{
	struct mux_cb	 cb = { mux_data, mux_error };
	struct conn	*c;

	c = xcalloc(1, sizeof *c);
	c->n = n;
	TAILQ_INIT(&c->pending);
	TAILQ_INIT(&c->deferred);
	c->request_timeout_ms = NRI_REQUEST_TIMEOUT_MS;
	ttrpc_streams_init(&c->srv);
	ttrpc_streams_init(&c->cli);
	c->bev = bufferevent_socket_new(n->srv->base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		close(fd);
		free(c);
		return (NULL);
	}
	c->mux = mux_new(&cb, c);
	c->rd_plugin = ttrpc_reader_new(plugin_frame, c);
	c->rd_runtime = ttrpc_reader_new(runtime_frame, c);
	if (mux_open(c->mux, MUX_PLUGIN_CONN) != 0 ||
	    mux_open(c->mux, MUX_RUNTIME_CONN) != 0) {
		conn_free(c);
		return (NULL);
	}
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_set_max_single_read(c->bev, NRI_READ_MAX);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) != 0) {
		conn_free(c);
		return (NULL);
	}
	gate_join(n->srv->gate, c->bev, gate_drop_cb, c);
	return (c);
}

static void
nri_connect(struct nri *n)
{
	const char		*path = n->srv->opts.nri_socket;
	struct sockaddr_un	 sun;
	char			*msg;
	int			 fd, err;

	if (n->c != NULL)
		return;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) >=
	    sizeof sun.sun_path) {
		err = ENAMETOOLONG;
		goto fail;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		err = errno;
		goto fail;
	}
	/* A unix socket connects at once or not at all (EAGAIN: retry). */
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		err = errno;
		close(fd);
		goto fail;
	}
	if ((n->c = conn_new(n, fd)) == NULL) {
		err = ENOMEM;
		goto fail;
	}
	n->connects++;
	n->quiet = 0;
	log_info("NRI: connected to %s", path);
	metrics_inc("nri_connects", NULL, NULL);
	metrics_inc("nri_events", "event", "connect");
	send_register(n->c);
	return;
fail:
	xasprintf(&msg, "cannot connect to %s: %s", path, strerror(err));
	if (!n->quiet)
		log_warnx("NRI: %s; retrying with backoff", msg);
	else
		log_debug("NRI: %s", msg);
	n->quiet = 1;
	metrics_inc("errors", "kind", "nri_connect");
	set_error(n, msg);
	free(msg);
	schedule_retry(n);
}

int
nri_new(struct server *srv, struct nri **out, char **cause)
{
	struct nri	*n;

	n = xcalloc(1, sizeof *n);
	n->srv = srv;
	n->backoff_ms = NRI_BACKOFF_MIN_MS;
	n->ctrs = strmap_new_borrowing();
	n->pods = strmap_new();
	acc_init(&n->queue);
	n->ev_retry = evtimer_new(srv->base, retry_cb, n);
	n->ev_close = event_new(srv->base, -1, 0, close_cb, n);
	n->ev_flush = event_new(srv->base, -1, 0, flush_cb, n);
	if (n->ev_retry == NULL || n->ev_close == NULL || n->ev_flush == NULL) {
		nri_free(n);
		xasprintf(cause, "NRI: cannot create events");
		return (-ENOMEM);
	}
	/* NULL only with a pick pbpick cannot make (a test says there is
	 * none): protobuf-c then unpacks every Synchronize. */
	if ((n->sync_pick = pbpick_new(
	    &nri__pkg__api__v1alpha1__synchronize_request__descriptor,
	    nri_sync_picks, nri_sync_npicks)) == NULL)
		log_warnx("NRI: the fields of a Synchronize cannot be "
		    "picked; protobuf-c unpacks them all");
	*out = n;
	/* Never fails for an absent runtime: it is retried. */
	nri_connect(n);
	return (0);
}

void
nri_free(struct nri *n)
{
	if (n == NULL)
		return;
	conn_free(n->c);
	if (n->ev_retry != NULL)
		event_free(n->ev_retry);
	if (n->ev_close != NULL)
		event_free(n->ev_close);
	if (n->ev_flush != NULL)
		event_free(n->ev_flush);
	acc_clear(&n->queue);
	table_clear(n);
	strmap_free(n->ctrs);
	strmap_free(n->pods);
	pbpick_free(n->sync_pick);
	free(n->error);
	free(n);
}

int
nri_connected(const struct nri *n)
{
	return (n != NULL && n->c != NULL && !n->c->dead);
}

int
nri_synchronized(const struct nri *n)
{
	return (nri_connected(n) && n->c->synchronized);
}

/* Queues one container's pinning (the policy's, when it goes). */
static void
queue_id(struct nri *n, const char *id)
{
	if (!nri_connected(n))
		return;
	acc_add(&n->queue, id);
	/* Runs after the callback that pushed, and after its reply. */
	event_active(n->ev_flush, EV_TIMEOUT, 0);
}

void
nri_push_updates(struct nri *n, const struct policy_update *p, int np)
{
	int	k;

	if (n == NULL || np <= 0)
		return;
	if (!nri_connected(n)) {
		log_debug("NRI: not connected; %d updates wait for the next "
		    "Synchronize", np);
		return;
	}
	for (k = 0; k < np; k++)
		queue_id(n, p[k].id);
}

void
nri_turn_done(struct nri *n)
{
	if (n != NULL)
		flush_cb(-1, 0, n);
}

json_t *
nri_status(const struct nri *n)
{
	int	up = nri_connected(n);

	return (json_pack("{s:b, s:b, s:b, s:o, s:s, s:i, s:I}",
	    "connected", up,
	    "registered", up && n->c->registered,
	    "synchronized", up && n->c->synchronized,
	    "error", n->error != NULL ? json_string(n->error) : json_null(),
	    "socket", n->srv->opts.nri_socket,
	    "connects", (int)n->connects,
	    "failedUpdates", (json_int_t)n->failed_updates));
}
