#include "autoconf.h"

/*
 * gRPC over HTTP/2 for the kubelet's sockets: one nghttp2 server session
 * per accepted unix connection, unary calls dispatched by :path, answers
 * as HEADERS + DATA + trailers or, for errors, a Trailers-Only HEADERS.
 * Streams are kept on our own per-connection list because
 * nghttp2_session_del does not report the streams still open.
 *
 * Idle peers must not lock the kubelet out: a connection that has not
 * finished its preface and SETTINGS, or that leaves a frame or a request
 * half-sent, is closed after a timeout; a complete one may stay quiet for
 * hours, but when the listener is full the one idle longest (with no call
 * in progress) is closed to make room. The input's frame boundaries are
 * followed here because nghttp2 buffers partial frames out of sight.
 * A connection is never freed inside one of its own callbacks: it is
 * marked dead and the reap event frees it on a later pass of the loop.
 */

#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#include "clock.h"
#include "grpc.h"
#include "h2.h"
#include "pbcheck.h"
#include "unixsock.h"
#include "gate.h"
#include "log.h"
#include "xmalloc.h"

#define H2_BACKLOG	16
#define H2_PATH_MAX	512	/* longer :path values are not ours */
#define H2_FRAME_HDLEN	9	/* RFC 9113 4.1 */

struct h2_conn;

struct h2_stream {
	struct h2_conn		*conn;
	int32_t			 id;
	char			*path;
	char			*method;
	int			 bad_type;	/* content-type not gRPC */
	int			 answered;
	int			 rst_after;	/* answered mid-upload */
	struct grpc_reader	 reader;
	size_t			 held;		/* counted in conn->held */
	struct h2_call		*call;
	uint8_t			*body;		/* the framed reply */
	size_t			 body_len;
	size_t			 body_off;
	TAILQ_ENTRY(h2_stream)	 entry;
};

struct h2_call {
	struct h2_stream	*stream;	/* NULL once the stream died */
	char			*path;
};

struct h2_conn {
	struct h2_server	*srv;
	struct bufferevent	*bev;
	nghttp2_session		*session;
	struct event		*ev_timeout;
	int			 in_recv;
	int			 dead;
	int			 ready;		/* the client's SETTINGS came */
	int			 timing;	/* ev_timeout is armed */
	uint64_t		 active;	/* ms, when bytes last came */
	/* Where the input stands in its framing. */
	size_t			 preface_left;
	uint8_t			 hdr[H2_FRAME_HDLEN];
	size_t			 hdr_have;
	size_t			 body_left;
	size_t			 held;		/* request bytes buffered */
	TAILQ_HEAD(, h2_stream)	 streams;
	LIST_ENTRY(h2_conn)	 entry;
};

struct h2_method {
	char			*path;
	h2_handler		 fn;
	void			*arg;
};

struct h2_server {
	struct event_base	*base;
	struct gate		*gate;		/* NULL: output never held */
	char			*name;
	char			*path;
	dev_t			 dev;
	ino_t			 ino;
	struct evconnlistener	*listener;
	struct event		*ev_reap;
	struct h2_method	*methods;
	size_t			 nmethods;
	unsigned		 nconns;	/* not counting the dead */
	LIST_HEAD(, h2_conn)	 conns;
};

#define NV(n, v, vl) { (uint8_t *)(n), (uint8_t *)(v), sizeof (n) - 1, \
	(vl), NGHTTP2_NV_FLAG_NONE }

static void	conn_free(struct h2_conn *);
static void	conn_flush(struct h2_conn *);

static void
stream_drop_body(struct h2_stream *st)
{
	st->conn->held -= st->held;
	st->held = 0;
	grpc_reader_clear(&st->reader);
}

static void
stream_free(struct h2_stream *st)
{
	if (st->call != NULL)
		st->call->stream = NULL;
	TAILQ_REMOVE(&st->conn->streams, st, entry);
	stream_drop_body(st);
	free(st->path);
	free(st->method);
	free(st->body);
	free(st);
}

static void
conn_free(struct h2_conn *c)
{
	struct h2_stream	*st;

	nghttp2_session_del(c->session);
	while ((st = TAILQ_FIRST(&c->streams)) != NULL)
		stream_free(st);
	gate_leave(c->srv->gate, c->bev);
	bufferevent_free(c->bev);
	event_free(c->ev_timeout);
	LIST_REMOVE(c, entry);
	if (!c->dead)
		c->srv->nconns--;
	free(c);
}

/* Closes c once the loop is out of its callbacks. */
static void
conn_kill(struct h2_conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	c->srv->nconns--;
	gate_leave(c->srv->gate, c->bev);
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	evtimer_del(c->ev_timeout);
	event_active(c->srv->ev_reap, EV_TIMEOUT, 0);
}

static void
gate_drop_cb(void *arg)
{
	struct h2_conn	*c = arg;

	log_warnx("%s: closing a connection: the state could not be made "
	    "durable, its answers are withdrawn", c->srv->name);
	conn_kill(c);
}

static void
reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h2_server	*srv = arg;
	struct h2_conn		*c, *next;

	(void)fd;
	(void)what;
	for (c = LIST_FIRST(&srv->conns); c != NULL; c = next) {
		next = LIST_NEXT(c, entry);
		if (c->dead)
			conn_free(c);
	}
}

/*
 * Closes a connection we no longer serve, telling a client that reads
 * with a GOAWAY on the way out; what the socket does not take at once is
 * not waited for.
 */
static void
conn_close(struct h2_conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	unsigned char	*p;
	ssize_t		 n;

	if (c->dead)
		return;
	if (!c->in_recv &&
	    nghttp2_session_terminate_session(c->session,
	    NGHTTP2_NO_ERROR) == 0 &&
	    nghttp2_session_send(c->session) == 0 &&
	    evbuffer_get_length(out) > 0 &&
	    (p = evbuffer_pullup(out, -1)) != NULL) {
		n = send(bufferevent_getfd(c->bev), p,
		    evbuffer_get_length(out), MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)n;
	}
	conn_kill(c);
}

/* Sends what nghttp2 has, and closes a connection it is done with. */
static void
conn_flush(struct h2_conn *c)
{
	struct evbuffer	*out = bufferevent_get_output(c->bev);
	int		 rv;

	if (c->in_recv || c->dead)
		return;
	if ((rv = nghttp2_session_send(c->session)) != 0) {
		log_debug("%s: h2 send: %s", c->srv->name,
		    nghttp2_strerror(rv));
		conn_kill(c);
		return;
	}
	if (!nghttp2_session_want_read(c->session) &&
	    !nghttp2_session_want_write(c->session) &&
	    evbuffer_get_length(out) == 0)
		conn_kill(c);
}

/* Follows the frame boundaries of the n bytes nghttp2 just took. */
static void
conn_track(struct h2_conn *c, const uint8_t *p, size_t n)
{
	size_t	k;

	while (n > 0) {
		if (c->preface_left > 0) {
			k = n < c->preface_left ? n : c->preface_left;
			c->preface_left -= k;
		} else if (c->body_left > 0) {
			k = n < c->body_left ? n : c->body_left;
			c->body_left -= k;
		} else {
			k = H2_FRAME_HDLEN - c->hdr_have;
			if (k > n)
				k = n;
			memcpy(c->hdr + c->hdr_have, p, k);
			c->hdr_have += k;
			if (c->hdr_have == H2_FRAME_HDLEN) {
				c->body_left = (size_t)c->hdr[0] << 16 |
				    (size_t)c->hdr[1] << 8 | c->hdr[2];
				c->hdr_have = 0;
			}
		}
		p += k;
		n -= k;
	}
}

/* Whether a frame or a request is half-received. */
static int
conn_partial(const struct h2_conn *c)
{
	const struct h2_stream	*st;

	if (c->hdr_have > 0 || c->body_left > 0)
		return (1);
	TAILQ_FOREACH(st, &c->streams, entry) {
		if (!st->answered && st->call == NULL)
			return (1);
	}
	return (0);
}

/* Whether a handler is working on a call of c. */
static int
conn_busy(const struct h2_conn *c)
{
	const struct h2_stream	*st;

	TAILQ_FOREACH(st, &c->streams, entry) {
		if (st->call != NULL)
			return (1);
	}
	return (0);
}

/* Arms the partial timeout when a frame or request begins, and stops it
 * when none is unfinished; the handshake's runs until the SETTINGS. */
static void
conn_watch(struct h2_conn *c)
{
	struct timeval	tv = { H2_PARTIAL_TIMEOUT_MS / 1000,
			    (H2_PARTIAL_TIMEOUT_MS % 1000) * 1000 };

	if (c->dead || !c->ready)
		return;
	if (!conn_partial(c)) {
		if (c->timing)
			evtimer_del(c->ev_timeout);
		c->timing = 0;
	} else if (!c->timing) {
		evtimer_add(c->ev_timeout, &tv);
		c->timing = 1;
	}
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct h2_conn	*c = arg;

	(void)fd;
	(void)what;
	c->timing = 0;
	if (c->dead)
		return;
	if (!c->ready)
		log_info("%s: closing a connection that did not send its "
		    "preface and SETTINGS within %d ms", c->srv->name,
		    H2_HANDSHAKE_TIMEOUT_MS);
	else
		log_info("%s: closing a connection that left a frame or a "
		    "request unfinished for %d ms", c->srv->name,
		    H2_PARTIAL_TIMEOUT_MS);
	conn_close(c);
}

/* The connection to close for a newcomer: never one with a call in
 * progress; one that never finished its handshake first, else the one
 * quiet the longest. */
static struct h2_conn *
conn_idlest(struct h2_server *srv)
{
	struct h2_conn	*c, *best = NULL;

	LIST_FOREACH(c, &srv->conns, entry) {
		if (c->dead || conn_busy(c))
			continue;
		if (best == NULL || (!c->ready && best->ready) ||
		    (c->ready == best->ready && c->active < best->active))
			best = c;
	}
	return (best);
}

static ssize_t
send_cb(nghttp2_session *session, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct h2_conn	*c = arg;
	struct evbuffer	*out = bufferevent_get_output(c->bev);

	(void)session;
	(void)flags;
	/* A peer that does not read gets no more of our memory, nor reads. */
	if (evbuffer_get_length(out) >= H2_OUTPUT_HIGH) {
		bufferevent_disable(c->bev, EV_READ);
		return (NGHTTP2_ERR_WOULDBLOCK);
	}
	if (evbuffer_add(out, data, len) != 0)
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	return ((ssize_t)len);
}

static int
on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame,
    void *arg)
{
	struct h2_conn		*c = arg;
	struct h2_stream	*st;

	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return (0);
	st = xcalloc(1, sizeof *st);
	st->conn = c;
	st->id = frame->hd.stream_id;
	grpc_reader_init(&st->reader, GRPC_MAX_REQUEST);
	TAILQ_INSERT_TAIL(&c->streams, st, entry);
	nghttp2_session_set_stream_user_data(session, st->id, st);
	return (0);
}

static int
is_grpc_type(const uint8_t *v, size_t len)
{
	static const char	ct[] = "application/grpc";
	size_t			n = sizeof ct - 1;

	if (len < n || memcmp(v, ct, n) != 0)
		return (0);
	return (len == n || v[n] == '+' || v[n] == ';');
}

static int
on_header(nghttp2_session *session, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen, uint8_t flags, void *arg)
{
	struct h2_stream	*st;

	(void)flags;
	(void)arg;
	if (frame->hd.type != NGHTTP2_HEADERS ||
	    frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return (0);
	st = nghttp2_session_get_stream_user_data(session,
	    frame->hd.stream_id);
	if (st == NULL)
		return (0);
	if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
		if (st->path == NULL && valuelen <= H2_PATH_MAX)
			st->path = xstrndup((const char *)value, valuelen);
	} else if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
		if (st->method == NULL && valuelen <= 16)
			st->method = xstrndup((const char *)value, valuelen);
	} else if (namelen == 12 && memcmp(name, "content-type", 12) == 0)
		st->bad_type = !is_grpc_type(value, valuelen);
	return (0);
}

static void
answer_error(struct h2_stream *st, int status, const char *msg)
{
	nghttp2_session	*s = st->conn->session;
	char		 code[16], *enc;
	nghttp2_nv	 nva[4] = {
		NV(":status", "200", 3),
		NV("content-type", "application/grpc", 16),
		NV("grpc-status", code, 0),
		NV("grpc-message", NULL, 0)
	};
	size_t		 n = 3;
	int		 rv;

	if (st->answered)
		return;
	st->answered = 1;
	snprintf(code, sizeof code, "%d", status);
	nva[2].valuelen = strlen(code);
	enc = grpc_pct_encode(msg != NULL ? msg : "", GRPC_MESSAGE_MAX);
	if (*enc != '\0') {
		nva[3].value = (uint8_t *)enc;
		nva[3].valuelen = strlen(enc);
		n = 4;
	}
	if (!nghttp2_session_get_stream_remote_close(s, st->id))
		st->rst_after = 1;
	rv = nghttp2_submit_response(s, st->id, nva, n, NULL);
	if (rv != 0)
		log_debug("%s: stream %d: %s", st->conn->srv->name, st->id,
		    nghttp2_strerror(rv));
	free(enc);
}

static ssize_t
body_read_cb(nghttp2_session *session, int32_t id, uint8_t *buf,
    size_t length, uint32_t *data_flags, nghttp2_data_source *source,
    void *arg)
{
	struct h2_stream	*st = source->ptr;
	size_t			 n = st->body_len - st->body_off;
	nghttp2_nv		 trailer[] = { NV("grpc-status", "0", 1) };
	int			 rv;

	(void)arg;
	if (n > length)
		n = length;
	memcpy(buf, st->body + st->body_off, n);
	st->body_off += n;
	if (st->body_off == st->body_len) {
		*data_flags |= NGHTTP2_DATA_FLAG_EOF |
		    NGHTTP2_DATA_FLAG_NO_END_STREAM;
		rv = nghttp2_submit_trailer(session, id, trailer, 1);
		if (rv != 0)
			return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);
	}
	return ((ssize_t)n);
}

static void
answer_ok(struct h2_stream *st, const void *msg, size_t len)
{
	nghttp2_nv		 nva[] = {
		NV(":status", "200", 3),
		NV("content-type", "application/grpc", 16)
	};
	nghttp2_data_provider	 prd;
	int			 rv;

	st->answered = 1;
	st->body_len = GRPC_PREFIX_SIZE + len;
	st->body = xmalloc(st->body_len);
	grpc_prefix(st->body, len);
	if (len != 0)
		memcpy(st->body + GRPC_PREFIX_SIZE, msg, len);
	prd.source.ptr = st;
	prd.read_callback = body_read_cb;
	rv = nghttp2_submit_response(st->conn->session, st->id, nva, 2, &prd);
	if (rv != 0)
		log_debug("%s: stream %d: %s", st->conn->srv->name, st->id,
		    nghttp2_strerror(rv));
}

static const struct h2_method *
find_method(const struct h2_server *srv, const char *path)
{
	size_t	i;

	for (i = 0; i < srv->nmethods; i++) {
		if (strcmp(srv->methods[i].path, path) == 0)
			return (&srv->methods[i]);
	}
	return (NULL);
}

static void
dispatch(struct h2_stream *st)
{
	const struct h2_method	*m;
	const uint8_t		*msg;
	size_t			 len;
	char			*cause = NULL;
	int			 rv;

	if (st->method == NULL || strcmp(st->method, "POST") != 0 ||
	    st->path == NULL || st->path[0] != '/') {
		answer_error(st, GRPC_STATUS_INTERNAL, "not a gRPC request");
		return;
	}
	if (st->bad_type) {
		answer_error(st, GRPC_STATUS_INTERNAL,
		    "content-type is not application/grpc");
		return;
	}
	if ((m = find_method(st->conn->srv, st->path)) == NULL) {
		xasprintf(&cause, "unknown method %s", st->path);
		answer_error(st, GRPC_STATUS_UNIMPLEMENTED, cause);
		free(cause);
		return;
	}
	if ((rv = grpc_reader_finish(&st->reader, &msg, &len, &cause)) != 0) {
		answer_error(st, grpc_status_for_error(rv), cause);
		free(cause);
		return;
	}
	st->call = xcalloc(1, sizeof *st->call);
	st->call->stream = st;
	st->call->path = xstrdup(st->path);
	m->fn(st->call, msg, len, m->arg);
	stream_drop_body(st);
}

static int
on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t id,
    const uint8_t *data, size_t len, void *arg)
{
	struct h2_stream	*st;
	char			*cause = NULL;
	int			 rv;

	(void)flags;
	(void)arg;
	st = nghttp2_session_get_stream_user_data(session, id);
	if (st == NULL || st->answered || st->call != NULL)
		return (0);
	if (st->conn->held + len > H2_MAX_CONN_BUFFERED) {
		answer_error(st, GRPC_STATUS_RESOURCE_EXHAUSTED,
		    "too many request bytes in flight on this connection");
		stream_drop_body(st);
		return (0);
	}
	if ((rv = grpc_reader_feed(&st->reader, data, len, &cause)) != 0) {
		answer_error(st, grpc_status_for_error(rv), cause);
		free(cause);
		stream_drop_body(st);
		return (0);
	}
	st->held += len;
	st->conn->held += len;
	return (0);
}

static int
on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
    void *arg)
{
	struct h2_conn		*c = arg;
	struct h2_stream	*st;

	/* nghttp2 checked the preface; this SETTINGS completes it. */
	if (frame->hd.type == NGHTTP2_SETTINGS &&
	    (frame->hd.flags & NGHTTP2_FLAG_ACK) == 0 && !c->ready) {
		c->ready = 1;
		evtimer_del(c->ev_timeout);
		c->timing = 0;
		return (0);
	}
	if (frame->hd.type != NGHTTP2_HEADERS &&
	    frame->hd.type != NGHTTP2_DATA)
		return (0);
	if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
		return (0);
	st = nghttp2_session_get_stream_user_data(session,
	    frame->hd.stream_id);
	if (st == NULL || st->answered || st->call != NULL)
		return (0);
	dispatch(st);
	return (0);
}

static int
on_frame_send(nghttp2_session *session, const nghttp2_frame *frame,
    void *arg)
{
	struct h2_stream	*st;

	(void)arg;
	if (frame->hd.type != NGHTTP2_HEADERS ||
	    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0)
		return (0);
	st = nghttp2_session_get_stream_user_data(session,
	    frame->hd.stream_id);
	/* The answer is out; the rest of an oversized upload is unwanted. */
	if (st != NULL && st->rst_after &&
	    !nghttp2_session_get_stream_remote_close(session, st->id))
		nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id,
		    NGHTTP2_NO_ERROR);
	return (0);
}

static int
on_stream_close(nghttp2_session *session, int32_t id, uint32_t error,
    void *arg)
{
	struct h2_stream	*st;

	(void)error;
	(void)arg;
	st = nghttp2_session_get_stream_user_data(session, id);
	if (st != NULL) {
		nghttp2_session_set_stream_user_data(session, id, NULL);
		stream_free(st);
	}
	return (0);
}

static void
read_cb(struct bufferevent *bev, void *arg)
{
	struct h2_conn		*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_iovec	 v[8];
	ssize_t			 rv = 0;
	size_t			 used;
	int			 i, n;

	if (c->dead)
		return;
	if (evbuffer_get_length(in) != 0)
		c->active = clock_mono_ms();
	c->in_recv = 1;
	while (rv >= 0 && evbuffer_get_length(in) != 0) {
		n = evbuffer_peek(in, -1, NULL, v, 8);
		if (n > 8)
			n = 8;
		used = 0;
		for (i = 0; i < n; i++) {
			rv = nghttp2_session_mem_recv(c->session,
			    v[i].iov_base, v[i].iov_len);
			if (rv < 0)
				break;
			conn_track(c, v[i].iov_base, v[i].iov_len);
			used += v[i].iov_len;
		}
		if (evbuffer_drain(in, used) != 0)
			rv = NGHTTP2_ERR_NOMEM;
	}
	c->in_recv = 0;
	if (rv < 0) {
		log_debug("%s: closing a connection: %s", c->srv->name,
		    nghttp2_strerror((int)rv));
		conn_kill(c);
		return;
	}
	conn_watch(c);
	conn_flush(c);
}

static void
write_cb(struct bufferevent *bev, void *arg)
{
	struct h2_conn	*c = arg;

	if (c->dead)
		return;
	bufferevent_enable(bev, EV_READ);
	conn_flush(c);
}

static void
event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct h2_conn	*c = arg;

	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_kill(c);
}

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct h2_server		*srv = arg;
	struct h2_conn			*c, *idle;
	nghttp2_session_callbacks	*cbs;
	nghttp2_option			*opt;
	nghttp2_settings_entry		 set[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_MAX_STREAMS }
	};
	struct timeval			 tv = {
		H2_HANDSHAKE_TIMEOUT_MS / 1000,
		(H2_HANDSHAKE_TIMEOUT_MS % 1000) * 1000
	};
	int				 rv;

	(void)l;
	(void)sa;
	(void)salen;
	if (srv->nconns >= H2_MAX_CONNS && (idle = conn_idlest(srv)) != NULL) {
		log_info("%s: %u connections already; closing the one %s for "
		    "a new one", srv->name, srv->nconns, idle->ready ?
		    "idle the longest" : "still in its handshake");
		conn_close(idle);
	}
	if (srv->nconns >= H2_MAX_CONNS) {
		log_warnx("%s: %u connections already, all with calls in "
		    "progress; refusing another", srv->name, srv->nconns);
		evutil_closesocket(fd);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->srv = srv;
	c->preface_left = NGHTTP2_CLIENT_MAGIC_LEN;
	c->active = clock_mono_ms();
	TAILQ_INIT(&c->streams);
	c->ev_timeout = evtimer_new(srv->base, timeout_cb, c);
	if (c->ev_timeout == NULL) {
		evutil_closesocket(fd);
		free(c);
		return;
	}
	c->bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		evutil_closesocket(fd);
		event_free(c->ev_timeout);
		free(c);
		return;
	}
	if (nghttp2_session_callbacks_new(&cbs) != 0)
		fatalx("nghttp2_session_callbacks_new");
	nghttp2_session_callbacks_set_send_callback(cbs, send_cb);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs,
	    on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
	    on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs,
	    on_frame_recv);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs,
	    on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	    on_stream_close);
	if (nghttp2_option_new(&opt) != 0)
		fatalx("nghttp2_option_new");
	/*
	 * nghttp2's HTTP checks refuse a '/' in :authority, which older gRPC
	 * clients send on unix sockets; dispatch() checks what gRPC needs.
	 */
	nghttp2_option_set_no_http_messaging(opt, 1);
	rv = nghttp2_session_server_new2(&c->session, cbs, c, opt);
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cbs);
	if (rv != 0)
		fatalx("nghttp2_session_server_new2: %s", nghttp2_strerror(rv));
	LIST_INSERT_HEAD(&srv->conns, c, entry);
	srv->nconns++;
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) != 0 ||
	    evtimer_add(c->ev_timeout, &tv) != 0) {
		log_warnx("%s: cannot watch a connection", srv->name);
		conn_kill(c);
		return;
	}
	if (srv->gate != NULL)
		gate_join(srv->gate, c->bev, gate_drop_cb, c);
	c->timing = 1;
	/* gRPC clients wait for the server's SETTINGS before any call. */
	nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, set, 1);
	conn_flush(c);
}

static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct h2_server	*srv = arg;

	(void)l;
	log_warn("%s: accept on %s", srv->name, srv->path);
}

void
h2_server_set_gate(struct h2_server *srv, struct gate *g)
{
	srv->gate = g;
}

struct h2_server *
h2_server_new(struct event_base *base, const char *name)
{
	struct h2_server	*srv;

	srv = xcalloc(1, sizeof *srv);
	srv->base = base;
	srv->name = xstrdup(name);
	LIST_INIT(&srv->conns);
	if ((srv->ev_reap = event_new(base, -1, 0, reap_cb, srv)) == NULL)
		fatalx("%s: cannot create an event", name);
	return (srv);
}

void
h2_server_free(struct h2_server *srv)
{
	struct h2_conn	*c;
	struct stat	 sb;
	size_t		 i;

	if (srv == NULL)
		return;
	while ((c = LIST_FIRST(&srv->conns)) != NULL)
		conn_free(c);
	if (srv->listener != NULL) {
		evconnlistener_free(srv->listener);
		/* Only our own socket: another daemon may have replaced it. */
		if (stat(srv->path, &sb) == 0 && sb.st_dev == srv->dev &&
		    sb.st_ino == srv->ino)
			unlink(srv->path);
	}
	for (i = 0; i < srv->nmethods; i++)
		free(srv->methods[i].path);
	free(srv->methods);
	event_free(srv->ev_reap);
	free(srv->path);
	free(srv->name);
	free(srv);
}

void
h2_server_add(struct h2_server *srv, const char *path, h2_handler fn,
    void *arg)
{
	struct h2_method	*m;
	size_t			 i;

	for (i = 0; i < srv->nmethods; i++) {
		if (strcmp(srv->methods[i].path, path) == 0)
			break;
	}
	if (i == srv->nmethods) {
		srv->methods = xreallocarray(srv->methods, srv->nmethods + 1,
		    sizeof *srv->methods);
		srv->methods[srv->nmethods++].path = xstrdup(path);
	}
	m = &srv->methods[i];
	m->fn = fn;
	m->arg = arg;
}

int
h2_server_listen(struct h2_server *srv, const char *path, char **cause)
{
	struct sockaddr_un	 sun, tmp;
	struct stat		 sb;
	const char		*base;
	char			*tpath;
	mode_t			 mask;
	int			 fd, rc;

	if (srv->listener != NULL) {
		xasprintf(cause, "%s: already listening", srv->name);
		return (-EBUSY);
	}
	if ((rc = unixsock_addr(&sun, path, cause)) != 0 ||
	    (rc = unixsock_check_stale(&sun, cause)) != 0)
		return (rc);
	base = strrchr(path, '/');
	if (base == NULL)
		xasprintf(&tpath, ".%s.tmp", path);
	else
		xasprintf(&tpath, "%.*s/.%s.tmp", (int)(base - path), path,
		    base + 1);
	if ((rc = unixsock_addr(&tmp, tpath, cause)) != 0) {
		free(tpath);
		return (rc);
	}
	(void)unlink(tpath);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		rc = -errno;
		xasprintf(cause, "socket: %s", strerror(errno));
		free(tpath);
		return (rc);
	}
	mask = umask(0077);
	rc = bind(fd, (struct sockaddr *)&tmp, sizeof tmp);
	umask(mask);
	if (rc != 0 || listen(fd, H2_BACKLOG) != 0 ||
	    rename(tpath, path) != 0 || stat(path, &sb) != 0) {
		rc = -errno;
		xasprintf(cause, "listen %s: %s", path, strerror(errno));
		(void)unlink(tpath);
		close(fd);
		free(tpath);
		return (rc);
	}
	free(tpath);
	srv->listener = evconnlistener_new(srv->base, accept_cb, srv,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (srv->listener == NULL) {
		xasprintf(cause, "cannot watch %s", path);
		unlink(path);
		close(fd);
		return (-EIO);
	}
	evconnlistener_set_error_cb(srv->listener, accept_error_cb);
	srv->dev = sb.st_dev;
	srv->ino = sb.st_ino;
	free(srv->path);
	srv->path = xstrdup(path);
	return (0);
}

const char *
h2_server_path(const struct h2_server *srv)
{
	return (srv->path);
}

unsigned
h2_server_connections(const struct h2_server *srv)
{
	return (srv->nconns);
}

static void
call_done(struct h2_call *call)
{
	struct h2_stream	*st = call->stream;

	if (st != NULL) {
		st->call = NULL;
		conn_flush(st->conn);
	}
	free(call->path);
	free(call);
}

void
h2_reply(struct h2_call *call, const void *msg, size_t len)
{
	if (call->stream != NULL)
		answer_ok(call->stream, msg, len);
	call_done(call);
}

void
h2_reply_error(struct h2_call *call, int status, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	if (call->stream != NULL) {
		va_start(ap, fmt);
		if (vasprintf(&msg, fmt, ap) == -1)
			msg = NULL;
		va_end(ap);
		answer_error(call->stream, status, msg);
		free(msg);
	}
	call_done(call);
}

int
h2_refuse_request(struct h2_call *call, const ProtobufCMessageDescriptor *req,
    const uint8_t *msg, size_t len)
{
	char	*cause = NULL;

	if (pbcheck_strings(req, msg, len, &cause) == 0)
		return (0);
	log_warnx("%s refused: %s", call->path, cause);
	h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT, "%s", cause);
	free(cause);
	return (1);
}

int
h2_call_alive(const struct h2_call *call)
{
	return (call->stream != NULL);
}

const char *
h2_call_path(const struct h2_call *call)
{
	return (call->path);
}
