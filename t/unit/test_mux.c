/*
 * test_mux.c: the NRI multiplexer's trunk framing (protocols.md 2.2, 9.2):
 * the RegisterPlugin example byte for byte, the writer's rules, per
 * connection byte streams however the trunk is cut, refusal of reserved
 * ids, oversize and garbage, and a deterministic fuzz loop feeding a
 * ttrpc reader per connection.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mux.h"
#include "nri.pb-c.h"
#include "ttrpc.h"
#include "xmalloc.h"

#define NRI(x)		Nri__Pkg__Api__V1alpha1__##x
#define NRI_INIT(X)	NRI__PKG__API__V1ALPHA1__##X##__INIT

#define MIB4		4194304U

/* What each connection received, and what the error callback heard. */
struct streams {
	uint8_t		*buf[4];
	size_t		 len[4];
	size_t		 calls;
	int		 stop;		/* data returns this when set */
	uint32_t	 close_after;	/* the callback closes this conn */
	struct mux	*mux;

	int		 errors;
	uint32_t	 err_conn;
	int		 err;
	char		*err_cause;
};

static int
on_data(uint32_t conn, const uint8_t *p, size_t len, void *arg)
{
	struct streams	*s = arg;

	cr_assert(conn >= 1 && conn < 4, "data for connection %u", conn);
	cr_assert_gt(len, 0, "no empty pieces");
	s->buf[conn] = xreallocarray(s->buf[conn], s->len[conn] + len, 1);
	memcpy(s->buf[conn] + s->len[conn], p, len);
	s->len[conn] += len;
	s->calls++;
	if (s->close_after == conn)
		mux_close(s->mux, conn);
	return (s->stop);
}

static void
on_error(uint32_t conn, int error, const char *cause, void *arg)
{
	struct streams	*s = arg;

	s->errors++;
	s->err_conn = conn;
	s->err = error;
	free(s->err_cause);
	s->err_cause = xstrdup(cause);
}

static const struct mux_cb cbs = { on_data, on_error };

static void
streams_clear(struct streams *s)
{
	int	i;

	for (i = 0; i < 4; i++)
		free(s->buf[i]);
	free(s->err_cause);
	memset(s, 0, sizeof *s);
}

static uint32_t
get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* A ttrpc message of dlen data bytes, the data a recognisable pattern. */
static uint8_t *
message(uint32_t stream, size_t dlen, size_t *len)
{
	uint8_t	*p;
	size_t	 i;

	*len = TTRPC_HEADER_SIZE + dlen;
	p = xmalloc(*len);
	ttrpc_header_pack(p, dlen, stream, TTRPC_REQUEST, 0);
	for (i = 0; i < dlen; i++)
		p[TTRPC_HEADER_SIZE + i] = (uint8_t)(i * 31 + stream);
	return (p);
}

/* The plugin's RegisterPlugin on connection 2, as 2.2 lays it out. */
Test(mux, register_plugin_example)
{
	static const uint8_t		 trunk[] = { 0, 0, 0, 2, 0, 0, 0, 0x49 };
	NRI(RegisterPluginRequest)	 req = NRI_INIT(REGISTER_PLUGIN_REQUEST);
	uint8_t				*msg, *out;
	size_t				 mlen, len;

	req.plugin_name = "cpu";
	req.plugin_idx = "90";
	cr_assert_eq(ttrpc_request_pack(1, "nri.pkg.api.v1alpha1.Runtime",
	    "RegisterPlugin", &req.base, 5000000000LL, &msg, &mlen), 0);
	cr_assert_eq(mux_pack(MUX_RUNTIME_CONN, msg, mlen, &out, &len), 0);
	cr_assert_eq(len, 8 + 73);
	cr_assert_arr_eq(out, trunk, sizeof trunk);
	cr_assert_arr_eq(out + 8, msg, mlen);
	free(out);
	free(msg);
	cr_assert_eq(MUX_PLUGIN_CONN, 1);
	cr_assert_eq(MUX_RUNTIME_CONN, 2);
	cr_assert_eq(MUX_MAX_PAYLOAD, 4194314);
}

/* mux_frames gives the bytes mux_pack does, as headers and slices of
 * msg itself. */
static void
check_frames(const uint8_t *msg, size_t mlen, const uint8_t *packed,
    size_t plen)
{
	struct mux_frames	fr;
	size_t			off = 0;
	int			i;

	cr_assert_eq(mux_frames(MUX_PLUGIN_CONN, msg, mlen, &fr), 0);
	cr_assert_eq(fr.n, mlen > 4096 ? 2 : 1);
	for (i = 0; i < fr.n; i++) {
		cr_assert_leq(off + 8 + fr.len[i], plen);
		cr_assert_arr_eq(packed + off, fr.hdr[i], 8);
		cr_assert(fr.data[i] >= msg && fr.data[i] + fr.len[i] <=
		    msg + mlen, "a slice of the message, not a copy");
		cr_assert_arr_eq(packed + off + 8, fr.data[i], fr.len[i]);
		off += 8 + fr.len[i];
	}
	cr_assert_eq(off, plen);
}

/*
 * Writer rules (2.2 a-c): the frame that starts a message is at most 4096
 * bytes, the rest follows in one frame, every frame carries the
 * connection id and only this message.
 */
static void
check_split(size_t dlen)
{
	uint8_t	*msg, *out;
	size_t	 mlen, len, first, rest;

	msg = message(1, dlen, &mlen);
	cr_assert_eq(mux_pack(MUX_PLUGIN_CONN, msg, mlen, &out, &len), 0);
	first = mlen < 4096 ? mlen : 4096;
	rest = mlen - first;
	cr_assert_eq(get32(out), 1);
	cr_assert_eq(get32(out + 4), first, "data %zu: first frame %u", dlen,
	    get32(out + 4));
	cr_assert_arr_eq(out + 8, msg, first);
	if (rest == 0)
		cr_assert_eq(len, 8 + mlen, "data %zu: one frame", dlen);
	else {
		cr_assert_eq(len, 16 + mlen, "data %zu: two frames", dlen);
		cr_assert_eq(get32(out + 8 + first), 1);
		cr_assert_eq(get32(out + 12 + first), rest);
		cr_assert_arr_eq(out + 16 + first, msg + first, rest);
	}
	check_frames(msg, mlen, out, len);
	free(out);
	free(msg);
}

Test(mux, writer_rules)
{
	check_split(0);
	check_split(1);
	check_split(4086);	/* 4096 with the header: still one frame */
	check_split(4087);
	check_split(70000);
	check_split(MIB4);
}

Test(mux, writer_refusals)
{
	uint8_t	*msg, *out = NULL;
	size_t	 mlen, len;

	msg = message(1, 100, &mlen);
	cr_assert_eq(mux_pack(0, msg, mlen, &out, &len), -EINVAL,
	    "connection 0 is reserved");
	cr_assert_eq(mux_pack(1, msg, mlen - 1, &out, &len), -EINVAL,
	    "a message cut short");
	cr_assert_eq(mux_pack(1, msg, 9, &out, &len), -EINVAL,
	    "less than a header");
	free(msg);

	/* Two messages in one call would share a frame (rule b). */
	msg = xmalloc(40);
	ttrpc_header_pack(msg, 10, 1, TTRPC_REQUEST, 0);
	ttrpc_header_pack(msg + 20, 10, 3, TTRPC_REQUEST, 0);
	cr_assert_eq(mux_pack(1, msg, 40, &out, &len), -EINVAL);

	/* A header announcing more than ttrpc allows. */
	ttrpc_header_pack(msg, MIB4 + 1, 1, TTRPC_REQUEST, 0);
	cr_assert_eq(mux_pack(1, msg, 40, &out, &len), -EMSGSIZE);
	cr_assert_null(out);
	free(msg);
}

/* The bytes of several messages on both connections, plus a stranger. */
struct trunk {
	uint8_t	*buf;
	size_t	 len;
	uint8_t	*want[4];
	size_t	 wlen[4];
};

static void
trunk_add(struct trunk *t, uint32_t conn, uint32_t stream, size_t dlen)
{
	uint8_t	*msg, *out;
	size_t	 mlen, len;

	msg = message(stream, dlen, &mlen);
	cr_assert_eq(mux_pack(conn, msg, mlen, &out, &len), 0);
	t->buf = xreallocarray(t->buf, t->len + len, 1);
	memcpy(t->buf + t->len, out, len);
	t->len += len;
	if (conn < 4) {
		t->want[conn] = xreallocarray(t->want[conn],
		    t->wlen[conn] + mlen, 1);
		memcpy(t->want[conn] + t->wlen[conn], msg, mlen);
		t->wlen[conn] += mlen;
	}
	free(out);
	free(msg);
}

/* A trunk frame with no payload, which the Go writer can produce. */
static void
trunk_empty(struct trunk *t, uint32_t conn)
{
	t->buf = xreallocarray(t->buf, t->len + 8, 1);
	put32(t->buf + t->len, conn);
	put32(t->buf + t->len + 4, 0);
	t->len += 8;
}

static void
trunk_small(struct trunk *t)
{
	memset(t, 0, sizeof *t);
	trunk_add(t, 2, 1, 40);
	trunk_add(t, 1, 1, 0);
	trunk_empty(t, 1);
	trunk_add(t, 3, 1, 20);		/* not open: dropped */
	trunk_add(t, 1, 3, 4100);	/* two trunk frames */
	trunk_add(t, 2, 3, 1);
	trunk_empty(t, 7);
	trunk_add(t, 1, 5, 7);
}

static void
trunk_clear(struct trunk *t)
{
	int	i;

	for (i = 0; i < 4; i++)
		free(t->want[i]);
	free(t->buf);
}

static void
trunk_check(const struct trunk *t, const struct streams *s, const char *how)
{
	int	c;

	for (c = 1; c <= 2; c++) {
		cr_assert_eq(s->len[c], t->wlen[c], "%s: connection %d got %zu "
		    "bytes, not %zu", how, c, s->len[c], t->wlen[c]);
		cr_assert_arr_eq(s->buf[c], t->want[c], t->wlen[c], "%s: "
		    "connection %d", how, c);
	}
	cr_assert_eq(s->len[3], 0, "%s: connection 3 is not open", how);
	cr_assert_eq(s->errors, 0, "%s", how);
}

static struct mux *
mux_12(struct streams *s)
{
	struct mux	*m;

	m = mux_new(&cbs, s);
	s->mux = m;
	cr_assert_eq(mux_open(m, MUX_PLUGIN_CONN), 0);
	cr_assert_eq(mux_open(m, MUX_RUNTIME_CONN), 0);
	return (m);
}

Test(mux, split_at_every_boundary)
{
	struct trunk	 t;
	struct streams	 s = { 0 };
	struct mux	*m;
	size_t		 i;
	char		 how[64];

	trunk_small(&t);
	for (i = 0; i <= t.len; i++) {
		m = mux_12(&s);
		cr_assert_eq(mux_feed(m, t.buf, i, NULL), 0);
		cr_assert_eq(mux_feed(m, t.buf + i, t.len - i, NULL), 0);
		cr_assert_eq(mux_pending(m), 0);
		snprintf(how, sizeof how, "split at %zu", i);
		trunk_check(&t, &s, how);
		mux_free(m);
		streams_clear(&s);
	}
	trunk_clear(&t);
}

Test(mux, byte_at_a_time)
{
	struct trunk	 t;
	struct streams	 s = { 0 };
	struct mux	*m;
	size_t		 i;

	trunk_small(&t);
	m = mux_12(&s);
	for (i = 0; i < t.len; i++)
		cr_assert_eq(mux_feed(m, t.buf + i, 1, NULL), 0);
	trunk_check(&t, &s, "byte at a time");
	mux_free(m);
	streams_clear(&s);
	trunk_clear(&t);
	mux_free(NULL);
}

Test(mux, open_and_close)
{
	struct streams	 s = { 0 };
	struct mux	*m;
	uint8_t		*msg, *out;
	size_t		 mlen, len;
	uint32_t	 c;

	m = mux_new(&cbs, &s);
	s.mux = m;
	cr_assert_eq(mux_open(m, 0), -EINVAL);
	for (c = 1; c <= MUX_MAX_CONNS; c++)
		cr_assert_eq(mux_open(m, c), 0);
	cr_assert_eq(mux_open(m, 1), 0, "opening twice is harmless");
	cr_assert_eq(mux_open(m, MUX_MAX_CONNS + 1), -ENOSPC);
	for (c = 3; c <= MUX_MAX_CONNS; c++)
		mux_close(m, c);
	mux_close(m, 3);
	mux_close(m, 0);

	/* After closing, a connection's frames are dropped. */
	msg = message(1, 10, &mlen);
	cr_assert_eq(mux_pack(2, msg, mlen, &out, &len), 0);
	cr_assert_eq(mux_feed(m, out, len, NULL), 0);
	cr_assert_eq(s.len[2], mlen);
	mux_close(m, 2);
	cr_assert_eq(mux_feed(m, out, len, NULL), 0);
	cr_assert_eq(s.len[2], mlen);
	free(out);

	/* A callback closing its own connection mid-frame drops the rest. */
	cr_assert_eq(mux_pack(1, msg, mlen, &out, &len), 0);
	s.close_after = 1;
	cr_assert_eq(mux_feed(m, out, 12, NULL), 0);
	cr_assert_eq(s.len[1], 4);
	cr_assert_eq(mux_feed(m, out + 12, len - 12, NULL), 0);
	cr_assert_eq(s.len[1], 4);
	cr_assert_eq(mux_pending(m), 0);
	free(out);
	free(msg);
	mux_free(m);
	streams_clear(&s);
}

Test(mux, truncated)
{
	struct trunk	 t;
	struct streams	 s = { 0 };
	struct mux	*m;

	trunk_small(&t);
	m = mux_12(&s);
	cr_assert_eq(mux_feed(m, t.buf, 5, NULL), 0);
	cr_assert_eq(mux_pending(m), 5);
	cr_assert_eq(s.calls, 0);
	cr_assert_eq(mux_feed(m, t.buf + 5, 3 + 20, NULL), 0);
	cr_assert_eq(mux_pending(m), 8 + 20);
	cr_assert_eq(s.len[2], 20, "payload is passed on as it comes");
	mux_free(m);
	streams_clear(&s);
	trunk_clear(&t);
}

/*
 * Refused headers: the reserved id, and lengths over one ttrpc frame
 * (exactly 4194314 is allowed). The error names the connection the header
 * gave, and the trunk stays failed.
 */
Test(mux, oversize)
{
	struct streams	 s = { 0 };
	struct mux	*m;
	uint8_t		 hdr[8], *big;
	char		*cause = NULL;

	m = mux_12(&s);
	put32(hdr, 2);
	put32(hdr + 4, MUX_MAX_PAYLOAD + 1);
	cr_assert_eq(mux_feed(m, hdr, 8, &cause), -EMSGSIZE);
	cr_assert_not_null(cause);
	cr_assert_eq(s.errors, 1);
	cr_assert_eq(s.err_conn, 2);
	cr_assert_eq(s.err, -EMSGSIZE);
	cr_assert_str_eq(s.err_cause, cause);
	cr_assert_not_null(strstr(cause, "4194315"), "%s", cause);
	free(cause);
	cause = NULL;
	cr_assert_eq(mux_feed(m, hdr, 1, &cause), -EMSGSIZE);
	cr_assert_not_null(cause);
	free(cause);
	cr_assert_eq(s.errors, 1, "reported once");
	mux_free(m);
	streams_clear(&s);

	/* For a connection that is not open, too: nobody sends it. */
	m = mux_12(&s);
	put32(hdr, 9);
	cr_assert_eq(mux_feed(m, hdr, 8, NULL), -EMSGSIZE);
	cr_assert_eq(s.err_conn, 9);
	mux_free(m);
	streams_clear(&s);

	/* The largest frame the Go writer makes. */
	m = mux_12(&s);
	big = xcalloc(1, MUX_MAX_PAYLOAD);
	put32(hdr, 1);
	put32(hdr + 4, MUX_MAX_PAYLOAD);
	cr_assert_eq(mux_feed(m, hdr, 8, NULL), 0);
	cr_assert_eq(mux_feed(m, big, MUX_MAX_PAYLOAD, NULL), 0);
	cr_assert_eq(s.len[1], MUX_MAX_PAYLOAD);
	cr_assert_eq(s.errors, 0);
	free(big);
	mux_free(m);
	streams_clear(&s);
}

Test(mux, garbage)
{
	static const char	 http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	static const uint8_t	 zero[] = { 0, 0, 0, 0, 0, 0, 0, 4, 1, 2, 3,
	    4 };
	struct streams		 s = { 0 };
	struct mux		*m;
	char			*cause = NULL;

	/* "GET " as an id, " / H" as a length of 790 MB. */
	m = mux_12(&s);
	cr_assert_eq(mux_feed(m, http, sizeof http - 1, &cause), -EMSGSIZE);
	cr_assert_not_null(cause);
	free(cause);
	cr_assert_eq(s.err_conn, 0x47455420);
	cr_assert_eq(s.calls, 0);
	mux_free(m);
	streams_clear(&s);

	m = mux_12(&s);
	cause = NULL;
	cr_assert_eq(mux_feed(m, zero, sizeof zero, &cause), -EPROTO);
	cr_assert_not_null(strstr(cause, "reserved"), "%s", cause);
	free(cause);
	cr_assert_eq(s.errors, 1);
	cr_assert_eq(s.err_conn, 0);
	cr_assert_eq(s.calls, 0);
	mux_free(m);
	streams_clear(&s);

	/* The error callback is optional. */
	{
		struct mux_cb	only = { on_data, NULL };

		m = mux_new(&only, &s);
		cr_assert_eq(mux_feed(m, zero, sizeof zero, NULL), -EPROTO);
		mux_free(m);
	}
}

Test(mux, data_callback_stops)
{
	struct trunk	 t;
	struct streams	 s = { 0 };
	struct mux	*m;
	char		*cause = NULL;

	trunk_small(&t);
	m = mux_12(&s);
	s.stop = -ECONNRESET;
	cr_assert_eq(mux_feed(m, t.buf, t.len, &cause), -ECONNRESET);
	cr_assert_not_null(cause);
	free(cause);
	cr_assert_eq(s.calls, 1);
	cr_assert_eq(mux_feed(m, t.buf, t.len, NULL), -ECONNRESET);
	cr_assert_eq(s.calls, 1);
	cr_assert_eq(s.errors, 0, "the callback's own refusal is not "
	    "reported back to it");
	mux_free(m);
	streams_clear(&s);
	trunk_clear(&t);
}

/*
 * The whole receive path: trunk bytes -> mux -> one ttrpc reader per
 * connection -> envelopes. Requests on both connections come back whole
 * with their stream ids, whatever the cutting.
 */
struct path {
	struct ttrpc_reader	*r[3];
	uint32_t		 streams[3][8];
	size_t			 n[3];
	uint32_t		 conn;
	int			 bad;
};

static int
path_frame(const struct ttrpc_frame *f, void *arg)
{
	struct path	*p = arg;
	Ttrpc__Request	*req;

	if (ttrpc_request_unpack(f, &req, NULL) != 0)
		return (p->bad = -EBADMSG);
	cr_assert_str_eq(req->method, p->conn == 1 ? "Configure" :
	    "RegisterPlugin");
	if (p->n[p->conn] < 8)
		p->streams[p->conn][p->n[p->conn]++] = f->stream;
	ttrpc_request_free(req);
	return (0);
}

static int
path_data(uint32_t conn, const uint8_t *buf, size_t len, void *arg)
{
	struct path	*p = arg;

	if (conn > 2)
		return (-EINVAL);
	p->conn = conn;
	return (ttrpc_reader_feed(p->r[conn], buf, len, NULL));
}

static void
path_add(uint8_t **buf, size_t *len, uint32_t conn, uint32_t stream,
    const char *method, size_t pad)
{
	NRI(ConfigureRequest)	 c = NRI_INIT(CONFIGURE_REQUEST);
	char			*cfg;
	uint8_t			*msg, *out;
	size_t			 mlen, olen;

	cfg = xmalloc(pad + 1);
	memset(cfg, 'c', pad);
	cfg[pad] = '\0';
	c.config = cfg;
	cr_assert_eq(ttrpc_request_pack(stream, "svc", method, &c.base, 0,
	    &msg, &mlen), 0);
	cr_assert_eq(mux_pack(conn, msg, mlen, &out, &olen), 0);
	*buf = xreallocarray(*buf, *len + olen, 1);
	memcpy(*buf + *len, out, olen);
	*len += olen;
	free(out);
	free(msg);
	free(cfg);
}

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (*x);
}

Test(mux, receive_path)
{
	static const struct mux_cb	 pcb = { path_data, NULL };
	uint64_t			 x = 42;
	struct path			 p;
	struct mux			*m;
	uint8_t				*buf = NULL;
	size_t				 len = 0, off, n;
	int				 round, c;

	path_add(&buf, &len, 2, 1, "RegisterPlugin", 0);
	path_add(&buf, &len, 1, 1, "Configure", 5000);
	path_add(&buf, &len, 2, 3, "RegisterPlugin", 10);
	path_add(&buf, &len, 1, 3, "Configure", 0);
	path_add(&buf, &len, 1, 5, "Configure", 100000);
	for (round = 0; round < 50; round++) {
		memset(&p, 0, sizeof p);
		for (c = 1; c <= 2; c++)
			p.r[c] = ttrpc_reader_new(path_frame, &p);
		m = mux_new(&pcb, &p);
		cr_assert_eq(mux_open(m, 1), 0);
		cr_assert_eq(mux_open(m, 2), 0);
		for (off = 0; off < len; off += n) {
			n = 1 + rnd(&x) % (round < 25 ? 16 : 9000);
			if (n > len - off)
				n = len - off;
			cr_assert_eq(mux_feed(m, buf + off, n, NULL), 0);
		}
		cr_assert_eq(p.n[1], 3);
		cr_assert_eq(p.streams[1][0], 1);
		cr_assert_eq(p.streams[1][1], 3);
		cr_assert_eq(p.streams[1][2], 5);
		cr_assert_eq(p.n[2], 2);
		cr_assert_eq(p.streams[2][1], 3);
		for (c = 1; c <= 2; c++) {
			cr_assert_eq(ttrpc_reader_pending(p.r[c]), 0);
			ttrpc_reader_free(p.r[c]);
		}
		mux_free(m);
	}
	free(buf);
}

/*
 * Fuzz: valid trunks with bits flipped, cut short and fed in random
 * pieces through the whole receive path. No crash, no leak, only the
 * documented results; an unmutated trunk arrives whole.
 */
static int
fuzz_frame(const struct ttrpc_frame *f, void *arg)
{
	size_t		*frames = arg;
	Ttrpc__Request	*req;
	char		*cause = NULL;

	(*frames)++;
	if (ttrpc_request_unpack(f, &req, &cause) == 0)
		ttrpc_request_free(req);
	free(cause);
	return (0);
}

struct fuzz {
	struct ttrpc_reader	*r[3];
	size_t			 frames;
};

static int
fuzz_data(uint32_t conn, const uint8_t *buf, size_t len, void *arg)
{
	struct fuzz	*fz = arg;

	cr_assert(conn == 1 || conn == 2, "data for closed connection %u",
	    conn);
	return (ttrpc_reader_feed(fz->r[conn], buf, len, NULL));
}

static void
fuzz_error(uint32_t conn, int error, const char *cause, void *arg)
{
	cr_assert(error == -EPROTO || error == -EMSGSIZE);
	cr_assert_not_null(cause);
}

Test(mux, fuzz)
{
	static const struct mux_cb	 fcb = { fuzz_data, fuzz_error };
	uint64_t			 x = 0x2545f4914f6cdd1dULL;
	struct fuzz			 fz;
	struct mux			*m;
	uint8_t				*buf;
	size_t				 len, off, n, i, msgs, mutations, want;
	uint32_t			 conn;
	int				 it, c, rc;
	char				*cause;

	for (it = 0; it < 3000; it++) {
		buf = NULL;
		len = 0;
		msgs = 1 + rnd(&x) % 5;
		want = 0;
		for (i = 0; i < msgs; i++) {
			conn = 1 + rnd(&x) % 3;
			want += conn != 3;
			path_add(&buf, &len, conn, 1 + 2 * i, "Configure",
			    rnd(&x) % 5000);
		}
		mutations = it % 4 == 0 ? 0 : 1 + rnd(&x) % 4;
		for (i = 0; i < mutations; i++)
			buf[rnd(&x) % len] ^= 1 << (rnd(&x) % 8);
		if (mutations != 0 && rnd(&x) % 2)
			len -= rnd(&x) % len;

		memset(&fz, 0, sizeof fz);
		for (c = 1; c <= 2; c++)
			fz.r[c] = ttrpc_reader_new(fuzz_frame, &fz.frames);
		m = mux_new(&fcb, &fz);
		cr_assert_eq(mux_open(m, 1), 0);
		cr_assert_eq(mux_open(m, 2), 0);
		rc = 0;
		for (off = 0; off < len && rc == 0; off += n) {
			n = 1 + rnd(&x) % 700;
			if (n > len - off)
				n = len - off;
			cause = NULL;
			rc = mux_feed(m, buf + off, n, &cause);
			cr_assert(rc == 0 || rc == -EPROTO || rc == -EMSGSIZE,
			    "feed %d", rc);
			cr_assert((rc == 0) == (cause == NULL));
			free(cause);
		}
		if (mutations == 0) {
			cr_assert_eq(rc, 0);
			cr_assert_eq(mux_pending(m), 0);
			cr_assert_eq(fz.frames, want);
		}
		for (c = 1; c <= 2; c++)
			ttrpc_reader_free(fz.r[c]);
		mux_free(m);
		free(buf);
	}
}
