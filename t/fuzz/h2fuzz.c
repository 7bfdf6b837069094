/*
 * h2fuzz.c: see h2fuzz.h. The client writes with blocking I/O before the
 * loop runs: inputs are capped well below a unix socket's buffer.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "h2fuzz.h"

static struct event_base	*base;

struct event_base *
h2fuzz_base(void)
{
	if (base == NULL) {
		log_init(1, -2);
		if ((base = event_base_new()) == NULL)
			abort();
	}
	return (base);
}

static void
drain(evutil_socket_t fd, short what, void *arg)
{
	char	buf[16384];
	int	*open = arg;
	ssize_t	n;

	(void)what;
	n = read(fd, buf, sizeof buf);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		*open = 0;
}

void
h2fuzz_exchange(const char *path, const uint8_t *data, size_t len)
{
	struct sockaddr_un	 sun;
	struct event		*ev;
	ssize_t			 n;
	int			 fd, open = 1;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path)
		abort();
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		perror(path);
		abort();
	}
	while (len > 0) {
		if ((n = write(fd, data, len)) == -1) {
			if (errno == EINTR)
				continue;
			/* The server may close before reading it all. */
			break;
		}
		data += n;
		len -= (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	if (evutil_make_socket_nonblocking(fd) != 0)
		abort();
	ev = event_new(base, fd, EV_READ | EV_PERSIST, drain, &open);
	if (ev == NULL || event_add(ev, NULL) != 0)
		abort();
	/* The server closes its end once it has read ours to the end. */
	while (open) {
		if (event_base_loop(base, EVLOOP_ONCE) == -1)
			abort();
	}
	event_free(ev);
	close(fd);
}

static uint8_t *
put_frame(uint8_t *p, size_t len, int type, int flags, uint32_t stream)
{
	p[0] = (uint8_t)(len >> 16);
	p[1] = (uint8_t)(len >> 8);
	p[2] = (uint8_t)len;
	p[3] = (uint8_t)type;
	p[4] = (uint8_t)flags;
	p[5] = (uint8_t)(stream >> 24);
	p[6] = (uint8_t)(stream >> 16);
	p[7] = (uint8_t)(stream >> 8);
	p[8] = (uint8_t)stream;
	return (p + 9);
}

/* An HPACK literal field without indexing, new name; short strings only. */
static uint8_t *
put_field(uint8_t *p, const char *name, const char *value)
{
	size_t	nl = strlen(name), vl = strlen(value);

	if (nl > 126 || vl > 126)
		abort();
	*p++ = 0x00;
	*p++ = (uint8_t)nl;
	memcpy(p, name, nl);
	p += nl;
	*p++ = (uint8_t)vl;
	memcpy(p, value, vl);
	return (p + vl);
}

#define H2_PREFACE	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define DATA_MAX	16384	/* the default SETTINGS_MAX_FRAME_SIZE */

uint8_t *
h2fuzz_call(const char *path, const uint8_t *msg, size_t len, size_t *outlen)
{
	uint8_t		 hdr[1024], *h, *out, *p;
	uint8_t		 prefix[5];
	size_t		 hlen, body, n, off;

	h = hdr;
	h = put_field(h, ":method", "POST");
	h = put_field(h, ":scheme", "http");
	h = put_field(h, ":path", path);
	h = put_field(h, ":authority", "localhost");
	h = put_field(h, "content-type", "application/grpc");
	h = put_field(h, "te", "trailers");
	hlen = (size_t)(h - hdr);

	body = sizeof prefix + len;
	/* Preface, SETTINGS, HEADERS, and a DATA header per piece. */
	out = malloc(sizeof H2_PREFACE + 9 + 9 + hlen +
	    (body / DATA_MAX + 1) * 9 + body);
	if (out == NULL)
		abort();
	p = out;
	memcpy(p, H2_PREFACE, sizeof H2_PREFACE - 1);
	p += sizeof H2_PREFACE - 1;
	p = put_frame(p, 0, 0x4, 0, 0);
	p = put_frame(p, hlen, 0x1, 0x4, 1);
	memcpy(p, hdr, hlen);
	p += hlen;

	prefix[0] = 0;
	prefix[1] = (uint8_t)(len >> 24);
	prefix[2] = (uint8_t)(len >> 16);
	prefix[3] = (uint8_t)(len >> 8);
	prefix[4] = (uint8_t)len;
	for (off = 0; off < body; off += n) {
		n = body - off < DATA_MAX ? body - off : DATA_MAX;
		p = put_frame(p, n, 0x0, off + n == body ? 0x1 : 0, 1);
		if (off < sizeof prefix) {
			/* The first piece holds the prefix. */
			memcpy(p, prefix, sizeof prefix);
			if (n > sizeof prefix)
				memcpy(p + sizeof prefix, msg,
				    n - sizeof prefix);
		} else
			memcpy(p, msg + off - sizeof prefix, n);
		p += n;
	}
	*outlen = (size_t)(p - out);
	return (out);
}
