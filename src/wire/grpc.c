#include "autoconf.h"

/*
 * gRPC's length-prefixed messages, status names, grpc-timeout and the
 * grpc-message escaping; pure byte work, shared by every gRPC endpoint.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "xmalloc.h"

static const char *const status_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
	"DATA_LOSS", "UNAUTHENTICATED"
};

const char *
grpc_status_name(int code)
{
	if (code < 0 || code > GRPC_STATUS_UNAUTHENTICATED)
		return ("UNKNOWN");
	return (status_names[code]);
}

void
grpc_reader_init(struct grpc_reader *r, size_t max)
{
	memset(r, 0, sizeof *r);
	r->max = max;
}

void
grpc_reader_clear(struct grpc_reader *r)
{
	free(r->buf);
	grpc_reader_init(r, r->max);
}

static int
reader_fail(struct grpc_reader *r, int error, char **cause, const char *what)
{
	r->failed = error;
	if (cause != NULL)
		*cause = xstrdup(what);
	return (error);
}

int
grpc_reader_feed(struct grpc_reader *r, const void *data, size_t len,
    char **cause)
{
	const uint8_t	*p = data;
	size_t		 total, ncap;

	if (r->failed != 0)
		return (reader_fail(r, r->failed, cause, "request already failed"));
	if (len == 0)
		return (0);
	/* Never hold more than prefix + cap, whatever arrives. */
	if (r->len < GRPC_PREFIX_SIZE) {
		size_t n = GRPC_PREFIX_SIZE - r->len;

		if (n > len)
			n = len;
		if (r->buf == NULL) {
			r->cap = GRPC_PREFIX_SIZE;
			r->buf = xmalloc(r->cap);
		}
		memcpy(r->buf + r->len, p, n);
		r->len += n;
		p += n;
		len -= n;
		if (r->len < GRPC_PREFIX_SIZE)
			return (0);
		if (r->buf[0] == 1)
			return (reader_fail(r, -ENOTSUP, cause,
			    "compressed messages are not supported"));
		if (r->buf[0] != 0)
			return (reader_fail(r, -EPROTO, cause,
			    "bad message flag byte"));
		r->want = (size_t)r->buf[1] << 24 | (size_t)r->buf[2] << 16 |
		    (size_t)r->buf[3] << 8 | r->buf[4];
		if (r->want > r->max)
			return (reader_fail(r, -EMSGSIZE, cause,
			    "request message larger than the limit"));
	}
	total = GRPC_PREFIX_SIZE + r->want;
	if (len > total - r->len)
		return (reader_fail(r, -EPROTO, cause,
		    "more than one message in a unary request"));
	if (len == 0)
		return (0);
	if (r->cap < r->len + len) {
		ncap = r->cap * 2;
		if (ncap < r->len + len)
			ncap = r->len + len;
		if (ncap > total)
			ncap = total;
		r->buf = xreallocarray(r->buf, 1, ncap);
		r->cap = ncap;
	}
	memcpy(r->buf + r->len, p, len);
	r->len += len;
	return (0);
}

int
grpc_reader_finish(struct grpc_reader *r, const uint8_t **msg, size_t *len,
    char **cause)
{
	if (r->failed != 0)
		return (reader_fail(r, r->failed, cause, "request failed"));
	if (r->len < GRPC_PREFIX_SIZE || r->len != GRPC_PREFIX_SIZE + r->want)
		return (reader_fail(r, -EPROTO, cause,
		    "request ended without a complete message"));
	*msg = r->buf + GRPC_PREFIX_SIZE;
	*len = r->want;
	return (0);
}

int
grpc_status_for_error(int error)
{
	switch (error) {
	case 0:
		return (GRPC_STATUS_OK);
	case -EMSGSIZE:
		return (GRPC_STATUS_RESOURCE_EXHAUSTED);
	case -ENOTSUP:
		return (GRPC_STATUS_UNIMPLEMENTED);
	default:
		return (GRPC_STATUS_INTERNAL);
	}
}

void
grpc_prefix(uint8_t out[GRPC_PREFIX_SIZE], size_t len)
{
	out[0] = 0;
	out[1] = (len >> 24) & 0xff;
	out[2] = (len >> 16) & 0xff;
	out[3] = (len >> 8) & 0xff;
	out[4] = len & 0xff;
}

char *
grpc_pct_encode(const char *s, size_t max)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	char			*out;
	size_t			 n = 0, need;

	out = xmalloc(strlen(s) * 3 + 1);
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		need = (*p < 0x20 || *p > 0x7e || *p == '%') ? 3 : 1;
		if (max != 0 && n + need > max)
			break;
		if (need == 3) {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 0xf];
		} else
			out[n++] = (char)*p;
	}
	out[n] = '\0';
	return (out);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

char *
grpc_pct_decode(const char *s)
{
	char	*out;
	size_t	 i, n = 0;
	int	 hi, lo;

	out = xmalloc(strlen(s) + 1);
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '%' && (hi = hexval((unsigned char)s[i + 1])) >= 0 &&
		    (lo = hexval((unsigned char)s[i + 2])) >= 0) {
			out[n++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			out[n++] = s[i];
	}
	out[n] = '\0';
	return (out);
}

int
grpc_timeout_parse(const char *s, int64_t *usec)
{
	int64_t	v = 0;
	size_t	i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		if (i == 8)
			return (-EINVAL);
		v = v * 10 + (s[i] - '0');
	}
	if (i == 0 || s[i] == '\0' || s[i + 1] != '\0')
		return (-EINVAL);
	switch (s[i]) {
	case 'H':
		*usec = v * 3600 * 1000000;
		break;
	case 'M':
		*usec = v * 60 * 1000000;
		break;
	case 'S':
		*usec = v * 1000000;
		break;
	case 'm':
		*usec = v * 1000;
		break;
	case 'u':
		*usec = v;
		break;
	case 'n':
		*usec = v / 1000;
		break;
	default:
		return (-EINVAL);
	}
	return (0);
}
