/*
 * ttrpc without I/O: the 10-byte frame header, a reader that turns a byte
 * stream into frames through a callback, the Request/Response envelopes
 * (protobuf-c, proto/ttrpc.proto), stream id bookkeeping and what a unary
 * server does with each frame it receives. Nothing here owns a socket.
 */
#ifndef TOPOAWARE_TTRPC_H
#define TOPOAWARE_TTRPC_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "ttrpc.pb-c.h"

struct pbarena;

#define TTRPC_HEADER_SIZE	10
#define TTRPC_MAX_DATA		(4U << 20)	/* upstream messageLengthMax */
/*
 * The first length byte is reserved (always 0 below 16 MiB). A header
 * with it set is not a frame: no peer can have meant it.
 */
#define TTRPC_GARBAGE_LEN	(1U << 24)

#define TTRPC_REQUEST		0x01
#define TTRPC_RESPONSE		0x02
#define TTRPC_DATA		0x03	/* streaming, protocol 1.2; never ours */

#define TTRPC_FLAG_REMOTE_CLOSED	0x01
#define TTRPC_FLAG_REMOTE_OPEN		0x02
#define TTRPC_FLAG_NO_DATA		0x04

/* The gRPC status codes ttrpc carries in Response.status.code. */
enum ttrpc_code {
	TTRPC_OK = 0,
	TTRPC_CANCELLED = 1,
	TTRPC_UNKNOWN = 2,
	TTRPC_INVALID_ARGUMENT = 3,
	TTRPC_DEADLINE_EXCEEDED = 4,
	TTRPC_NOT_FOUND = 5,
	TTRPC_ALREADY_EXISTS = 6,
	TTRPC_PERMISSION_DENIED = 7,
	TTRPC_RESOURCE_EXHAUSTED = 8,
	TTRPC_FAILED_PRECONDITION = 9,
	TTRPC_ABORTED = 10,
	TTRPC_OUT_OF_RANGE = 11,
	TTRPC_UNIMPLEMENTED = 12,
	TTRPC_INTERNAL = 13,
	TTRPC_UNAVAILABLE = 14,
	TTRPC_DATA_LOSS = 15,
	TTRPC_UNAUTHENTICATED = 16
};

/* The upper-case gRPC name of a code, or "code N" (static storage). */
const char	*ttrpc_code_name(int);

/*
 * One received frame. type and flags are passed on as they came, known or
 * not: what to do with an unknown one is the receiver's decision (see
 * ttrpc_server_check). When oversize is set the data was longer than
 * TTRPC_MAX_DATA and was skipped: data is NULL and len is the length the
 * header announced. data points into the reader's buffer or the caller's
 * input and is valid only during the callback.
 */
struct ttrpc_frame {
	uint32_t	 stream;
	uint8_t		 type;
	uint8_t		 flags;
	int		 oversize;
	const uint8_t	*data;
	size_t		 len;
};

/* Write a header into hdr[0..TTRPC_HEADER_SIZE). */
void	ttrpc_header_pack(uint8_t *hdr, uint32_t len, uint32_t stream,
	    uint8_t type, uint8_t flags);

/* Read a header from hdr[0..TTRPC_HEADER_SIZE) into *f (data NULL). */
void	ttrpc_header_unpack(const uint8_t *hdr, struct ttrpc_frame *f);

/*
 * Build one frame: header plus len bytes of data. *out (caller frees)
 * holds *outlen = TTRPC_HEADER_SIZE + len bytes. -EMSGSIZE when len is
 * over TTRPC_MAX_DATA.
 */
int	ttrpc_frame_pack(uint32_t stream, uint8_t type, uint8_t flags,
	    const void *data, size_t len, uint8_t **out, size_t *outlen);

/*
 * The reader. Each complete frame is handed to cb in order, from inside
 * ttrpc_reader_feed(). A frame over TTRPC_MAX_DATA is skipped as it
 * arrives and reported with oversize set once its last byte is in (the Go
 * server drains it too, then answers ResourceExhausted). A header whose
 * length reaches TTRPC_GARBAGE_LEN fails the reader.
 *
 * cb returns 0 to go on; anything else stops the reader for good and is
 * returned by this and every later feed. cb must not free the reader.
 */
typedef int (*ttrpc_frame_cb)(const struct ttrpc_frame *, void *);

struct ttrpc_reader;

struct ttrpc_reader	*ttrpc_reader_new(ttrpc_frame_cb, void *);
void			 ttrpc_reader_free(struct ttrpc_reader *);

/*
 * Feed len bytes. Returns 0, the callback's non-zero value (the callback
 * knows why), or -EPROTO for garbage with *cause (caller frees; cause may
 * be NULL). After a failure every feed returns the same value, with a
 * *cause saying so.
 */
int	ttrpc_reader_feed(struct ttrpc_reader *, const void *, size_t,
	    char **cause);

/*
 * Bytes of a frame begun and not finished: non-zero when the stream ends
 * means the peer cut a frame short.
 */
size_t	ttrpc_reader_pending(const struct ttrpc_reader *);

/*
 * Stream ids of one connection. A client numbers its requests 1, 3, 5 ...;
 * a server takes a request only with an odd id above every earlier one.
 */
struct ttrpc_streams {
	uint32_t	next;	/* client: the next id, 0 once all are used */
	uint32_t	last;	/* server: the highest request id taken */
};

void	ttrpc_streams_init(struct ttrpc_streams *);

/* The next client id in *id; -EOVERFLOW once 0xffffffff has been used. */
int	ttrpc_streams_next(struct ttrpc_streams *, uint32_t *id);

/*
 * What a unary server does with a received frame, as the Go server does:
 *   TTRPC_HANDLE: a new request; its id is now taken.
 *   TTRPC_REJECT: answer Response{status {*code, *why}} on f->stream:
 *     an oversize frame (ResourceExhausted), an even id, Data for a stream
 *     that is not open (we open none), a reused or smaller request id
 *     (all InvalidArgument).
 *   TTRPC_IGNORE: a Response or an unknown type; drop it, say nothing.
 * Request flags are ignored (every method here is unary). *code and
 * *why (caller frees) are set for TTRPC_REJECT only; why may be NULL.
 */
enum ttrpc_action {
	TTRPC_HANDLE,
	TTRPC_REJECT,
	TTRPC_IGNORE
};

enum ttrpc_action ttrpc_server_check(struct ttrpc_streams *,
		    const struct ttrpc_frame *, int *code, char **why);

/*
 * Envelopes. The pack functions serialise payload (NULL for an empty
 * message) inside the envelope inside one frame: *out (caller frees),
 * *outlen bytes, ready to write. -EMSGSIZE when the frame data would be
 * over TTRPC_MAX_DATA.
 *
 * A Request is unary (flags 0); timeout_nano is the caller's deadline, 0
 * for none. An OK Response has no status; an error one (code != 0) has a
 * status and no payload, so an OK reply to an empty message is a bare
 * header.
 */
int	ttrpc_request_pack(uint32_t stream, const char *service,
	    const char *method, const ProtobufCMessage *payload,
	    int64_t timeout_nano, uint8_t **out, size_t *outlen);
/* The same with the payload already packed (len bytes at payload). */
int	ttrpc_request_pack_bytes(uint32_t stream, const char *service,
	    const char *method, const uint8_t *payload, size_t len,
	    int64_t timeout_nano, uint8_t **out, size_t *outlen);
/*
 * The same frames with the payload's room left for the caller: len bytes
 * at *at, to be written before the frame goes (a reply of a thousand
 * updates is written once, in its frame).
 */
int	ttrpc_request_frame(uint32_t stream, const char *service,
	    const char *method, size_t len, int64_t timeout_nano,
	    uint8_t **out, size_t *outlen, uint8_t **at);
int	ttrpc_response_frame(uint32_t stream, size_t len, uint8_t **out,
	    size_t *outlen, uint8_t **at);
/* A Response whose payload is already packed (len bytes). */
int	ttrpc_response_pack_bytes(uint32_t stream, const uint8_t *payload,
	    size_t len, uint8_t **out, size_t *outlen);
int	ttrpc_response_pack(uint32_t stream, const ProtobufCMessage *payload,
	    uint8_t **out, size_t *outlen);
int	ttrpc_error_pack(uint32_t stream, int code, const char *message,
	    uint8_t **out, size_t *outlen);

/*
 * Decode the envelope of a frame. *req or *resp is the caller's, freed
 * with ttrpc_request_free() / ttrpc__response__free_unpacked() (NULL
 * allocator). A request's payload is not copied: it points into the
 * frame's data, which must outlive *req. -EPROTO for a frame of the wrong
 * type, -EMSGSIZE for an oversize one and -EBADMSG for bytes that do not
 * decode, with *cause (caller frees; cause may be NULL).
 */
int	ttrpc_request_unpack(const struct ttrpc_frame *, Ttrpc__Request **req,
	    char **cause);
void	ttrpc_request_free(Ttrpc__Request *);
int	ttrpc_response_unpack(const struct ttrpc_frame *,
	    Ttrpc__Response **resp, char **cause);

/* The status code of a decoded Response: 0 when it has no status. */
int	ttrpc_response_code(const Ttrpc__Response *);

/* The arena a payload is decoded into, sized for it; with large, its
 * first block mapped in huge pages from a MiB up (pbarena_new_large). */
struct pbarena *ttrpc_payload_arena(const ProtobufCBinaryData *, int large);

/*
 * Decode a payload as a message of type desc. With mem, the message is
 * made in an arena of its own (pbarena.h), *mem, and freed with
 * pbarena_free(*mem); without, *msg is freed with
 * protobuf_c_message_free_unpacked(*msg, NULL). -EBADMSG with *cause
 * when the bytes are not such a message (nothing to free).
 */
int	ttrpc_payload_unpack(const ProtobufCMessageDescriptor *desc,
	    const ProtobufCBinaryData *payload, ProtobufCMessage **msg,
	    struct pbarena **mem, char **cause);
/* The same for a message that may be megabytes and is not one pod's (a
 * Synchronize): its arena is made by pbarena_new_large. */
int	ttrpc_payload_unpack_large(const ProtobufCMessageDescriptor *desc,
	    const ProtobufCBinaryData *payload, ProtobufCMessage **msg,
	    struct pbarena **mem, char **cause);

#endif
