/*
 * gRPC servers over HTTP/2 (nghttp2) on unix sockets: h2c with prior
 * knowledge, unary calls only, routed by :path to registered handlers.
 * A handler gets the request message and a reply handle; it may answer at
 * once or later. The handle stays valid until h2_reply or h2_reply_error,
 * which always free it; if the client went away meanwhile the answer is
 * dropped quietly.
 */
#ifndef TOPOAWARE_H2_H
#define TOPOAWARE_H2_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

/* Named limits (topoawared(8) lists them). */
/* Per listener; when full, the longest-idle connection makes room. */
#define H2_MAX_CONNS		64
#define H2_MAX_STREAMS		100	/* SETTINGS_MAX_CONCURRENT_STREAMS */
#define H2_OUTPUT_HIGH		(64U << 10)	/* stop producing above this */
/* Request bytes held for unfinished calls on one connection; a call that
 * would pass it fails with RESOURCE_EXHAUSTED. */
#define H2_MAX_CONN_BUFFERED	(16U << 20)
/*
 * A connection must finish its preface and SETTINGS this soon after it
 * is accepted, and a frame or request once begun must be whole this soon;
 * else it is closed. A complete connection may stay idle for good.
 */
#define H2_HANDSHAKE_TIMEOUT_MS	5000
#define H2_PARTIAL_TIMEOUT_MS	5000

struct h2_server;
struct h2_call;
struct ProtobufCMessageDescriptor;

typedef void	(*h2_handler)(struct h2_call *, const uint8_t *, size_t,
		    void *);

/* name is for the log ("registration", "DRA"). */
struct h2_server *h2_server_new(struct event_base *, const char *name);
/* Its connections' output waits behind the gate (gate.h). */
struct gate;
void	h2_server_set_gate(struct h2_server *, struct gate *);
/* Frees the connections (pending calls become dead handles) and removes
 * the socket. NULL is a no-op. */
void	h2_server_free(struct h2_server *);
/* path is the full "/package.Service/Method"; a later add replaces. */
void	h2_server_add(struct h2_server *, const char *path, h2_handler,
	    void *);
/*
 * Listens on the unix socket path: refused when a live server answers
 * there; a stale socket is replaced by binding a dot-named temporary
 * socket beside it and renaming it over, so a watcher never sees a socket
 * that does not accept.
 */
int	h2_server_listen(struct h2_server *, const char *path, char **);
const char *h2_server_path(const struct h2_server *);
unsigned	h2_server_connections(const struct h2_server *);

/* The answers; each frees the call. msg is a serialized protobuf. */
void	h2_reply(struct h2_call *, const void *msg, size_t len);
void	h2_reply_error(struct h2_call *, int status, const char *, ...)
	    __attribute__((__format__(__printf__, 3, 4)));
/*
 * For a handler, before it unpacks its request as a req: protobuf-c would
 * cut a string with a NUL byte short, so such a request (or one nested
 * too deep, or not protobuf at all) is answered INVALID_ARGUMENT naming
 * the field, the call freed, and 1 returned. 0: go ahead.
 */
int	h2_refuse_request(struct h2_call *,
	    const struct ProtobufCMessageDescriptor *req, const uint8_t *,
	    size_t);
/* 0 once the stream is gone (the answer would be dropped). */
int	h2_call_alive(const struct h2_call *);
const char *h2_call_path(const struct h2_call *);

#endif
