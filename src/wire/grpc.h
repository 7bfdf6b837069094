/*
 * The gRPC message layer without I/O: the 5-byte length prefix of each
 * message, a reader that gathers one unary request from DATA chunks under
 * a size cap, status codes, grpc-timeout and the percent-encoding of
 * grpc-message. HTTP/2 itself is h2.c's.
 */
#ifndef TOPOAWARE_GRPC_H
#define TOPOAWARE_GRPC_H

#include <stddef.h>
#include <stdint.h>

#define GRPC_PREFIX_SIZE	5
/*
 * The largest request message we accept (grpc-go's default receive limit;
 * a kubelet batch of claims is far smaller). Beyond it: RESOURCE_EXHAUSTED.
 */
#define GRPC_MAX_REQUEST	(4U << 20)
/* grpc-message is cut to this many bytes once encoded: grpcio clients
 * allow only 8 KiB of headers in all. */
#define GRPC_MESSAGE_MAX	1024

enum grpc_status {
	GRPC_STATUS_OK = 0,
	GRPC_STATUS_CANCELLED = 1,
	GRPC_STATUS_UNKNOWN = 2,
	GRPC_STATUS_INVALID_ARGUMENT = 3,
	GRPC_STATUS_DEADLINE_EXCEEDED = 4,
	GRPC_STATUS_NOT_FOUND = 5,
	GRPC_STATUS_ALREADY_EXISTS = 6,
	GRPC_STATUS_PERMISSION_DENIED = 7,
	GRPC_STATUS_RESOURCE_EXHAUSTED = 8,
	GRPC_STATUS_FAILED_PRECONDITION = 9,
	GRPC_STATUS_ABORTED = 10,
	GRPC_STATUS_OUT_OF_RANGE = 11,
	GRPC_STATUS_UNIMPLEMENTED = 12,
	GRPC_STATUS_INTERNAL = 13,
	GRPC_STATUS_UNAVAILABLE = 14,
	GRPC_STATUS_DATA_LOSS = 15,
	GRPC_STATUS_UNAUTHENTICATED = 16
};

/* "OK", "UNIMPLEMENTED", ...; "UNKNOWN" for codes outside 0-16. */
const char	*grpc_status_name(int);

/*
 * Gathers the body of a unary request. Feed it every DATA chunk; it fails
 * as soon as it knows the request is bad:
 *   -EMSGSIZE  the message is longer than max (RESOURCE_EXHAUSTED);
 *   -ENOTSUP   the compressed flag is set (UNIMPLEMENTED: we never
 *              advertise an encoding);
 *   -EPROTO    a flag byte other than 0 or 1, or bytes after the message
 *              (INTERNAL).
 * grpc_reader_finish, at END_STREAM, hands out the message (valid until
 * grpc_reader_clear) or -EPROTO when none, or only part of one, came.
 */
struct grpc_reader {
	uint8_t		*buf;
	size_t		 len;
	size_t		 cap;
	size_t		 max;
	size_t		 want;		/* message length, once known */
	int		 failed;
};

void	grpc_reader_init(struct grpc_reader *, size_t max);
void	grpc_reader_clear(struct grpc_reader *);
int	grpc_reader_feed(struct grpc_reader *, const void *, size_t,
	    char **);
int	grpc_reader_finish(struct grpc_reader *, const uint8_t **, size_t *,
	    char **);
/* The status a reader error answers with. */
int	grpc_status_for_error(int);

/* Writes the prefix of an uncompressed message of len bytes. */
void	grpc_prefix(uint8_t [GRPC_PREFIX_SIZE], size_t len);

/*
 * grpc-message: every byte outside 0x20-0x7E, and '%', as %XX. The result
 * is at most max bytes (0: no limit) and never ends inside an escape.
 * decode turns valid %XX back and passes anything else through, as the
 * protocol asks of receivers. Both return a string the caller frees.
 */
char	*grpc_pct_encode(const char *, size_t max);
char	*grpc_pct_decode(const char *);

/* grpc-timeout ("1..8 digits" + H M S m u n) in microseconds; -EINVAL
 * when malformed. */
int	grpc_timeout_parse(const char *, int64_t *);

#endif
