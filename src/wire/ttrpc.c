/*
 * ttrpc.c owns the ttrpc wire form: frame headers, the frame reader with
 * its partial-frame buffer, stream id rules and the protobuf envelopes
 * (containerd/ttrpc PROTOCOL.md, channel.go, server.go). It never does
 * I/O: bytes come in through ttrpc_reader_feed() and frames go out as
 * buffers the caller writes.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memfill.h"
#include "pbarena.h"
#include "pbcheck.h"
#include "ttrpc.h"
#include "xmalloc.h"

/* A frame buffer bigger than this is not kept between frames. */
#define KEEP_BUFFER	(64U * 1024)
/* Such a frame's pages are filled this far ahead of the bytes that
 * arrived (memfill.h): hundreds of pages, fresh each time, for the
 * megabytes of a Synchronize. */
#define FILL_AHEAD	(256U * 1024)

struct ttrpc_reader {
	ttrpc_frame_cb		 cb;
	void			*arg;

	uint8_t			 hdr[TTRPC_HEADER_SIZE];
	size_t			 hlen;	/* header bytes in hdr */
	struct ttrpc_frame	 f;	/* valid once hlen is full */
	size_t			 skip;	/* oversize data still to skip */

	uint8_t			*buf;	/* data of a frame split in pieces */
	size_t			 have;
	size_t			 size;
	size_t			 filled; /* bytes of buf whose pages are filled */

	int			 error;	/* non-zero: failed for good */
};

static const char *code_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED"
};

const char *
ttrpc_code_name(int code)
{
	static char	unknown[32];
	int		n = sizeof code_names / sizeof code_names[0];

	if (code >= 0 && code < n)
		return (code_names[code]);
	snprintf(unknown, sizeof unknown, "code %d", code);
	return (unknown);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

void
ttrpc_header_pack(uint8_t *hdr, uint32_t len, uint32_t stream, uint8_t type,
    uint8_t flags)
{
	put32(hdr, len);
	put32(hdr + 4, stream);
	hdr[8] = type;
	hdr[9] = flags;
}

void
ttrpc_header_unpack(const uint8_t *hdr, struct ttrpc_frame *f)
{
	memset(f, 0, sizeof *f);
	f->len = get32(hdr);
	f->stream = get32(hdr + 4);
	f->type = hdr[8];
	f->flags = hdr[9];
}

int
ttrpc_frame_pack(uint32_t stream, uint8_t type, uint8_t flags,
    const void *data, size_t len, uint8_t **out, size_t *outlen)
{
	uint8_t	*p;

	if (len > TTRPC_MAX_DATA)
		return (-EMSGSIZE);
	p = xmalloc(TTRPC_HEADER_SIZE + len);
	ttrpc_header_pack(p, len, stream, type, flags);
	if (len != 0)
		memcpy(p + TTRPC_HEADER_SIZE, data, len);
	*out = p;
	*outlen = TTRPC_HEADER_SIZE + len;
	return (0);
}

struct ttrpc_reader *
ttrpc_reader_new(ttrpc_frame_cb cb, void *arg)
{
	struct ttrpc_reader	*r;

	r = xcalloc(1, sizeof *r);
	r->cb = cb;
	r->arg = arg;
	return (r);
}

void
ttrpc_reader_free(struct ttrpc_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}

size_t
ttrpc_reader_pending(const struct ttrpc_reader *r)
{
	if (r->hlen < TTRPC_HEADER_SIZE)
		return (r->hlen);
	if (r->f.oversize)
		return (TTRPC_HEADER_SIZE + r->f.len - r->skip);
	return (TTRPC_HEADER_SIZE + r->have);
}

/* Hand the current frame over and get ready for the next header. */
static int
reader_deliver(struct ttrpc_reader *r, const uint8_t *data)
{
	int	rc;

	r->f.data = r->f.len != 0 && !r->f.oversize ? data : NULL;
	rc = r->cb(&r->f, r->arg);
	r->hlen = 0;
	r->have = 0;
	r->filled = 0;
	r->skip = 0;
	if (r->size > KEEP_BUFFER) {
		free(r->buf);
		r->buf = NULL;
		r->size = 0;
	}
	if (rc != 0)
		r->error = rc;
	return (rc);
}

int
ttrpc_reader_feed(struct ttrpc_reader *r, const void *in, size_t len,
    char **cause)
{
	const uint8_t	*p = in;
	size_t		 n, end;
	int		 rc;

	if (r->error != 0) {
		if (cause != NULL)
			xasprintf(cause, "ttrpc stream failed earlier");
		return (r->error);
	}
	while (len > 0) {
		if (r->hlen < TTRPC_HEADER_SIZE) {
			n = TTRPC_HEADER_SIZE - r->hlen;
			if (n > len)
				n = len;
			memcpy(r->hdr + r->hlen, p, n);
			r->hlen += n;
			p += n;
			len -= n;
			if (r->hlen < TTRPC_HEADER_SIZE)
				break;

			ttrpc_header_unpack(r->hdr, &r->f);
			if (r->f.len >= TTRPC_GARBAGE_LEN) {
				r->error = -EPROTO;
				if (cause != NULL)
					xasprintf(cause, "ttrpc frame length "
					    "%zu is garbage", r->f.len);
				return (-EPROTO);
			}
			if (r->f.len > TTRPC_MAX_DATA) {
				r->f.oversize = 1;
				r->skip = r->f.len;
				continue;
			}
			if (r->f.len == 0 || len >= r->f.len) {
				/* Whole in the input: no copy. */
				n = r->f.len;
				if ((rc = reader_deliver(r, p)) != 0)
					return (rc);
				p += n;
				len -= n;
			}
			continue;
		}

		if (r->f.oversize) {
			n = r->skip < len ? r->skip : len;
			r->skip -= n;
			p += n;
			len -= n;
			if (r->skip == 0 && (rc = reader_deliver(r, NULL)) != 0)
				return (rc);
			continue;
		}

		if (r->size < r->f.len) {
			free(r->buf);
			r->buf = xmalloc(r->f.len);
			r->size = r->f.len;
		}
		n = r->f.len - r->have;
		if (n > len)
			n = len;
		if (r->f.len > KEEP_BUFFER && r->have + n > r->filled) {
			end = r->have + n + FILL_AHEAD;
			if (end > r->f.len)
				end = r->f.len;
			(void)memfill(r->buf + r->filled, r->buf + end);
			r->filled = end;
		}
		memcpy(r->buf + r->have, p, n);
		r->have += n;
		p += n;
		len -= n;
		if (r->have == r->f.len && (rc = reader_deliver(r, r->buf)) != 0)
			return (rc);
	}
	return (0);
}

void
ttrpc_streams_init(struct ttrpc_streams *s)
{
	s->next = 1;
	s->last = 0;
}

int
ttrpc_streams_next(struct ttrpc_streams *s, uint32_t *id)
{
	if (s->next == 0)
		return (-EOVERFLOW);
	*id = s->next;
	/* 0xffffffff + 2 wraps to 1: mark the space used up instead. */
	s->next = s->next == UINT32_MAX ? 0 : s->next + 2;
	return (0);
}

enum ttrpc_action
ttrpc_server_check(struct ttrpc_streams *s, const struct ttrpc_frame *f,
    int *code, char **why)
{
	if (f->oversize) {
		*code = TTRPC_RESOURCE_EXHAUSTED;
		if (why != NULL)
			xasprintf(why, "message length %zu exceeds maximum "
			    "message size of %u", f->len, TTRPC_MAX_DATA);
		return (TTRPC_REJECT);
	}
	if (f->stream % 2 != 1) {
		*code = TTRPC_INVALID_ARGUMENT;
		if (why != NULL)
			xasprintf(why, "stream id %u must be odd for client "
			    "initiated streams", f->stream);
		return (TTRPC_REJECT);
	}
	switch (f->type) {
	case TTRPC_DATA:
		*code = TTRPC_INVALID_ARGUMENT;
		if (why != NULL)
			xasprintf(why, "stream %u is not active", f->stream);
		return (TTRPC_REJECT);
	case TTRPC_REQUEST:
		if (f->stream <= s->last) {
			*code = TTRPC_INVALID_ARGUMENT;
			if (why != NULL)
				xasprintf(why, "stream id %u cannot be reused "
				    "and must increase", f->stream);
			return (TTRPC_REJECT);
		}
		s->last = f->stream;
		return (TTRPC_HANDLE);
	default:
		return (TTRPC_IGNORE);
	}
}

/* Wrap an envelope in a frame, packing it straight after the header. */
static int
pack_envelope(uint32_t stream, uint8_t type, const ProtobufCMessage *env,
    uint8_t **out, size_t *outlen)
{
	size_t	 n;
	uint8_t	*p;

	n = protobuf_c_message_get_packed_size(env);
	if (n > TTRPC_MAX_DATA)
		return (-EMSGSIZE);
	p = xmalloc(TTRPC_HEADER_SIZE + n);
	ttrpc_header_pack(p, n, stream, type, 0);
	protobuf_c_message_pack(env, p + TTRPC_HEADER_SIZE);
	*out = p;
	*outlen = TTRPC_HEADER_SIZE + n;
	return (0);
}

/* The bytes of a message: 0 for none (NULL), an empty payload. */
static size_t
message_size(const ProtobufCMessage *m)
{
	return (m != NULL ? protobuf_c_message_get_packed_size(m) : 0);
}

int
ttrpc_request_pack(uint32_t stream, const char *service, const char *method,
    const ProtobufCMessage *payload, int64_t timeout_nano, uint8_t **out,
    size_t *outlen)
{
	size_t	 n = message_size(payload);
	uint8_t	*at;
	int	 rc;

	/* Packed where it goes, in the frame. */
	if ((rc = ttrpc_request_frame(stream, service, method, n,
	    timeout_nano, out, outlen, &at)) == 0 && n > 0)
		(void)protobuf_c_message_pack(payload, at);
	return (rc);
}

/*
 * A frame of type around an envelope whose bytes field number field holds
 * len bytes the caller writes at *at: before it, hlen bytes at *out +
 * TTRPC_HEADER_SIZE for the envelope's fields numbered below, and after
 * it tlen bytes at *at + len for those above, also the caller's to pack.
 * protobuf-c packs fields in their order and leaves an empty proto3
 * bytes field out, so the bytes are its.
 */
static int
frame_around(uint32_t stream, uint8_t type, int field, size_t hlen,
    size_t len, size_t tlen, uint8_t **out, size_t *outlen, uint8_t **at)
{
	size_t	 n;
	uint8_t	*p;

	if (len > TTRPC_MAX_DATA || hlen > TTRPC_MAX_DATA)
		return (-EMSGSIZE);
	n = hlen + (len > 0 ? 1 + pbwire_varint_size(len) + len : 0) + tlen;
	if (n > TTRPC_MAX_DATA)
		return (-EMSGSIZE);
	p = xmalloc(TTRPC_HEADER_SIZE + n + 1);
	ttrpc_header_pack(p, (uint32_t)n, stream, type, 0);
	*out = p;
	*outlen = TTRPC_HEADER_SIZE + n;
	p += TTRPC_HEADER_SIZE + hlen;
	if (len > 0) {
		*p++ = (uint8_t)(field << 3 | PBWIRE_LEN);
		p = pbwire_varint_put(len, p);
	}
	*at = p;
	return (0);
}

int
ttrpc_request_frame(uint32_t stream, const char *service, const char *method,
    size_t len, int64_t timeout_nano, uint8_t **out, size_t *outlen,
    uint8_t **at)
{
	Ttrpc__Request	 head = TTRPC__REQUEST__INIT;
	Ttrpc__Request	 tail = TTRPC__REQUEST__INIT;
	int		 rc;

	/* protobuf-c wants mutable pointers; it only reads them. */
	head.service = (char *)service;
	head.method = (char *)method;
	tail.timeout_nano = timeout_nano;
	if ((rc = frame_around(stream, TTRPC_REQUEST, 3,
	    protobuf_c_message_get_packed_size(&head.base), len,
	    protobuf_c_message_get_packed_size(&tail.base), out, outlen,
	    at)) != 0)
		return (rc);
	(void)protobuf_c_message_pack(&head.base, *out + TTRPC_HEADER_SIZE);
	(void)protobuf_c_message_pack(&tail.base, *at + len);
	return (0);
}

int
ttrpc_request_pack_bytes(uint32_t stream, const char *service,
    const char *method, const uint8_t *payload, size_t len,
    int64_t timeout_nano, uint8_t **out, size_t *outlen)
{
	uint8_t	*at;
	int	 rc;

	if ((rc = ttrpc_request_frame(stream, service, method, len,
	    timeout_nano, out, outlen, &at)) == 0 && len > 0)
		memcpy(at, payload, len);
	return (rc);
}

int
ttrpc_response_frame(uint32_t stream, size_t len, uint8_t **out,
    size_t *outlen, uint8_t **at)
{
	return (frame_around(stream, TTRPC_RESPONSE, 2, 0, len, 0, out, outlen,
	    at));
}

int
ttrpc_response_pack_bytes(uint32_t stream, const uint8_t *payload,
    size_t len, uint8_t **out, size_t *outlen)
{
	uint8_t	*at;
	int	 rc;

	if ((rc = ttrpc_response_frame(stream, len, out, outlen, &at)) == 0 &&
	    len > 0)
		memcpy(at, payload, len);
	return (rc);
}

int
ttrpc_response_pack(uint32_t stream, const ProtobufCMessage *payload,
    uint8_t **out, size_t *outlen)
{
	size_t	 n = message_size(payload);
	uint8_t	*at;
	int	 rc;

	if ((rc = ttrpc_response_frame(stream, n, out, outlen, &at)) == 0 &&
	    n > 0)
		(void)protobuf_c_message_pack(payload, at);
	return (rc);
}

int
ttrpc_error_pack(uint32_t stream, int code, const char *message,
    uint8_t **out, size_t *outlen)
{
	Ttrpc__Response	resp = TTRPC__RESPONSE__INIT;
	Ttrpc__Status	st = TTRPC__STATUS__INIT;

	st.code = code;
	st.message = (char *)(message != NULL ? message : "");
	resp.status = &st;
	return (pack_envelope(stream, TTRPC_RESPONSE, &resp.base, out, outlen));
}

static int
unpack_check(const struct ttrpc_frame *f, uint8_t type, const char *what,
    char **cause)
{
	if (f->oversize) {
		if (cause != NULL)
			xasprintf(cause, "ttrpc %s on stream %u is %zu bytes, "
			    "over the %u byte limit", what, f->stream, f->len,
			    TTRPC_MAX_DATA);
		return (-EMSGSIZE);
	}
	if (f->type != type) {
		if (cause != NULL)
			xasprintf(cause, "ttrpc frame on stream %u has type "
			    "%u, not a %s", f->stream, f->type, what);
		return (-EPROTO);
	}
	return (0);
}

/* The Request envelope's payload field (proto/ttrpc.proto). */
#define REQUEST_PAYLOAD	3

/*
 * Where the payload of a Request's bytes is, and the bytes of its other
 * fields: *rest is p itself when there is no payload, else a copy
 * without it (the caller frees *own). The last payload counts, as in
 * any decoder. -1 on bytes that are not wire format.
 */
static int
request_split(const uint8_t *p, size_t len, const uint8_t **payload,
    size_t *plen, const uint8_t **rest, size_t *rlen, uint8_t **own)
{
	size_t		off = 0, at, start = 0, n = 0, kept = 0;
	uint32_t	num;
	unsigned	type;
	uint8_t		*buf = NULL;

	*payload = NULL;
	*plen = 0;
	*own = NULL;
	while (off < len) {
		at = off;
		if (pbwire_next_field(p, len, &off, &num, &type, &start,
		    &n) != 0) {
			free(buf);
			return (-1);
		}
		if (num == REQUEST_PAYLOAD && type == PBWIRE_LEN) {
			if (buf == NULL) {
				/* What came before is copied as it was; what
				 * is left is at most every byte but this
				 * field's. */
				buf = xmalloc(len - (off - at) + 1);
				memcpy(buf, p, at);
				kept = at;
			}
			*payload = p + start;
			*plen = n;
			continue;
		}
		if (buf != NULL) {
			memcpy(buf + kept, p + at, off - at);
			kept += off - at;
		}
	}
	*rest = buf != NULL ? buf : p;
	*rlen = buf != NULL ? kept : len;
	*own = buf;
	return (0);
}

int
ttrpc_request_unpack(const struct ttrpc_frame *f, Ttrpc__Request **req,
    char **cause)
{
	const uint8_t	*payload, *rest;
	uint8_t		*own;
	size_t		 plen, rlen;
	int		 rc;

	if ((rc = unpack_check(f, TTRPC_REQUEST, "request", cause)) != 0)
		return (rc);
	*req = NULL;
	if (request_split(f->data, f->len, &payload, &plen, &rest, &rlen,
	    &own) == 0) {
		*req = ttrpc__request__unpack(NULL, rlen, rest);
		free(own);
	}
	if (*req == NULL) {
		if (cause != NULL)
			xasprintf(cause, "ttrpc request on stream %u does not "
			    "decode", f->stream);
		return (-EBADMSG);
	}
	/* The payload stays where it is, in the frame: a Synchronize's is
	 * most of a megabyte, and a copy of it would be touched once. */
	(*req)->payload.data = (uint8_t *)payload;
	(*req)->payload.len = plen;
	return (0);
}

void
ttrpc_request_free(Ttrpc__Request *req)
{
	if (req == NULL)
		return;
	req->payload.data = NULL;
	req->payload.len = 0;
	ttrpc__request__free_unpacked(req, NULL);
}

int
ttrpc_response_unpack(const struct ttrpc_frame *f, Ttrpc__Response **resp,
    char **cause)
{
	int	rc;

	if ((rc = unpack_check(f, TTRPC_RESPONSE, "response", cause)) != 0)
		return (rc);
	*resp = ttrpc__response__unpack(NULL, f->len, f->data);
	if (*resp == NULL) {
		if (cause != NULL)
			xasprintf(cause, "ttrpc response on stream %u does "
			    "not decode", f->stream);
		return (-EBADMSG);
	}
	return (0);
}

int
ttrpc_response_code(const Ttrpc__Response *resp)
{
	return (resp->status != NULL ? resp->status->code : TTRPC_OK);
}

struct pbarena *
ttrpc_payload_arena(const ProtobufCBinaryData *payload, int large)
{
	size_t	hint;

	/* Unpacked, a message takes about four times its bytes
	 * (pbarena_new caps the first block; pbarena_new_large maps it
	 * whole from a MiB up). */
	hint = payload->len < SIZE_MAX / 8 ? 4 * payload->len + 256 :
	    SIZE_MAX / 2;
	return (large ? pbarena_new_large(hint) : pbarena_new(hint));
}

static int
payload_unpack(const ProtobufCMessageDescriptor *desc,
    const ProtobufCBinaryData *payload, ProtobufCMessage **msg,
    struct pbarena **mem, int large, char **cause)
{
	struct pbarena	*a = NULL;

	if (mem != NULL) {
		*mem = NULL;
		a = ttrpc_payload_arena(payload, large);
	}
	*msg = protobuf_c_message_unpack(desc,
	    a != NULL ? pbarena_allocator(a) : NULL, payload->len,
	    payload->data);
	if (*msg == NULL) {
		pbarena_free(a);
		if (cause != NULL)
			xasprintf(cause, "payload is not a %s", desc->name);
		return (-EBADMSG);
	}
	if (mem != NULL)
		*mem = a;
	return (0);
}

int
ttrpc_payload_unpack(const ProtobufCMessageDescriptor *desc,
    const ProtobufCBinaryData *payload, ProtobufCMessage **msg,
    struct pbarena **mem, char **cause)
{
	return (payload_unpack(desc, payload, msg, mem, 0, cause));
}

int
ttrpc_payload_unpack_large(const ProtobufCMessageDescriptor *desc,
    const ProtobufCBinaryData *payload, ProtobufCMessage **msg,
    struct pbarena **mem, char **cause)
{
	return (payload_unpack(desc, payload, msg, mem, 1, cause));
}
