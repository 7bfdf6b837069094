/*
 * The body of a Kubernetes watch (GET <collection>?watch=1), decoded
 * incrementally (sans I/O): bytes go in, in pieces of any size, and each
 * event comes out through a callback as soon as its last byte arrived.
 * The body is a sequence of JSON objects
 *
 *	{"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR","object":{...}}
 *
 * with any whitespace between them. The first error stops the decoder for
 * good: the caller drops the stream and watches again.
 */
#ifndef TOPOAWARE_WATCHEV_H
#define TOPOAWARE_WATCHEV_H

#include <stddef.h>

#include <jansson.h>

/* An event is at most this long; a longer one is refused as soon as its
 * first WATCHEV_MAX_EVENT bytes went by, without keeping them. */
#define WATCHEV_MAX_EVENT	(4U << 20)

enum watchev_type {
	WATCHEV_ADDED,
	WATCHEV_MODIFIED,
	WATCHEV_DELETED,
	WATCHEV_BOOKMARK,
	WATCHEV_ERROR
};

enum watchev_error {
	WATCHEV_OK = 0,
	WATCHEV_ETOOBIG,	/* an event longer than WATCHEV_MAX_EVENT */
	WATCHEV_ENOTOBJECT,	/* an event that is not a JSON object */
	WATCHEV_EJSON,		/* an event that is not JSON */
	WATCHEV_ETYPE,		/* "type" missing or unknown */
	WATCHEV_ENOOBJECT,	/* "object" missing or not an object */
	WATCHEV_ENOMETA,	/* the object has no metadata object */
	WATCHEV_ENORV,		/* ... or no metadata.resourceVersion string */
	WATCHEV_ESTATUS,	/* an ERROR event: see watchev_status_code */
	WATCHEV_ESTOPPED	/* the callback asked to stop */
};

struct watchev;

/* One event; obj is borrowed for the call. Non-zero stops the decoder
 * (WATCHEV_ESTOPPED). ERROR events are not passed here: they fail the
 * decoder with WATCHEV_ESTATUS. */
typedef int	(*watchev_cb)(void *arg, enum watchev_type, json_t *obj);

struct watchev	*watchev_new(watchev_cb, void *arg);
void		 watchev_free(struct watchev *);

/*
 * Decodes len more bytes, calling back for each event they complete.
 * Returns 0, or -1 once failed (now or before): watchev_error says how
 * and watchev_cause in words. Events before the bad one were delivered.
 */
int		 watchev_feed(struct watchev *, const void *, size_t len);
/* Whether the bytes so far end between events (a clean end of stream). */
int		 watchev_idle(const struct watchev *);

enum watchev_error watchev_error(const struct watchev *);
/* What went wrong, or NULL; owned by the decoder. */
const char	*watchev_cause(const struct watchev *);
/* After WATCHEV_ESTATUS: the Status's code (0 when it has none) and its
 * message (NULL when none); owned by the decoder. */
int		 watchev_status_code(const struct watchev *);
const char	*watchev_status_message(const struct watchev *);
/* "ADDED" ... "ERROR". */
const char	*watchev_type_name(enum watchev_type);
/* The enum value's name, "WATCHEV_EJSON"..., for logs and tests. */
const char	*watchev_error_name(enum watchev_error);

#endif
