/*
 * mux.c owns the trunk framing of the NRI multiplexer: splitting incoming
 * trunk bytes into per-connection byte streams, refusing headers no NRI
 * peer sends, and cutting outgoing ttrpc messages into trunk frames the
 * Go reader accepts (protocols.md 2.2). It keeps no payload: bytes go to
 * the data callback as they arrive.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mux.h"
#include "xmalloc.h"

struct mux {
	struct mux_cb	 cb;
	void		*arg;

	uint32_t	 conns[MUX_MAX_CONNS];	/* 0: a free slot */

	uint8_t		 hdr[MUX_HEADER_SIZE];
	size_t		 hlen;
	uint32_t	 conn;		/* of the current frame */
	uint32_t	 len;
	uint32_t	 remain;	/* payload bytes still to come */

	int		 error;
};

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

struct mux *
mux_new(const struct mux_cb *cb, void *arg)
{
	struct mux	*m;

	m = xcalloc(1, sizeof *m);
	m->cb = *cb;
	m->arg = arg;
	return (m);
}

void
mux_free(struct mux *m)
{
	free(m);
}

static int
mux_slot(const struct mux *m, uint32_t conn)
{
	int	i;

	for (i = 0; i < MUX_MAX_CONNS; i++) {
		if (m->conns[i] == conn)
			return (i);
	}
	return (-1);
}

int
mux_open(struct mux *m, uint32_t conn)
{
	int	i;

	if (conn == MUX_RESERVED_CONN)
		return (-EINVAL);
	if (mux_slot(m, conn) != -1)
		return (0);
	if ((i = mux_slot(m, 0)) == -1)
		return (-ENOSPC);
	m->conns[i] = conn;
	return (0);
}

void
mux_close(struct mux *m, uint32_t conn)
{
	int	i;

	if (conn != MUX_RESERVED_CONN && (i = mux_slot(m, conn)) != -1)
		m->conns[i] = 0;
}

size_t
mux_pending(const struct mux *m)
{
	if (m->hlen < MUX_HEADER_SIZE)
		return (m->hlen);
	return (MUX_HEADER_SIZE + (size_t)(m->len - m->remain));
}

static int
mux_fail(struct mux *m, int error, char **cause)
{
	char	*why;

	if (m->conn == MUX_RESERVED_CONN)
		xasprintf(&why, "trunk frame for the reserved connection 0");
	else
		xasprintf(&why, "trunk frame of %u bytes for connection %u "
		    "exceeds %u", m->len, m->conn, MUX_MAX_PAYLOAD);
	m->error = error;
	if (m->cb.error != NULL)
		m->cb.error(m->conn, error, why, m->arg);
	if (cause != NULL)
		*cause = why;
	else
		free(why);
	return (error);
}

int
mux_feed(struct mux *m, const void *in, size_t len, char **cause)
{
	const uint8_t	*p = in;
	size_t		 n;
	int		 rc;

	if (m->error != 0) {
		if (cause != NULL)
			xasprintf(cause, "trunk failed earlier");
		return (m->error);
	}
	while (len > 0) {
		if (m->hlen < MUX_HEADER_SIZE) {
			n = MUX_HEADER_SIZE - m->hlen;
			if (n > len)
				n = len;
			memcpy(m->hdr + m->hlen, p, n);
			m->hlen += n;
			p += n;
			len -= n;
			if (m->hlen < MUX_HEADER_SIZE)
				break;
			m->conn = get32(m->hdr);
			m->len = m->remain = get32(m->hdr + 4);
			if (m->conn == MUX_RESERVED_CONN)
				return (mux_fail(m, -EPROTO, cause));
			if (m->len > MUX_MAX_PAYLOAD)
				return (mux_fail(m, -EMSGSIZE, cause));
			if (m->remain == 0)
				m->hlen = 0;
			continue;
		}

		n = m->remain < len ? m->remain : len;
		/* Looked up per piece: the callback may close its connection. */
		if (mux_slot(m, m->conn) != -1 &&
		    (rc = m->cb.data(m->conn, p, n, m->arg)) != 0) {
			m->error = rc;
			if (cause != NULL)
				xasprintf(cause, "connection %u refused its "
				    "data", m->conn);
			return (rc);
		}
		m->remain -= n;
		p += n;
		len -= n;
		if (m->remain == 0)
			m->hlen = 0;
	}
	return (0);
}

int
mux_frames(uint32_t conn, const void *msg, size_t msglen,
    struct mux_frames *fr)
{
	const uint8_t	*src = msg;
	struct ttrpc_frame f;
	size_t		 first;
	int		 i;

	fr->n = 0;
	if (conn == MUX_RESERVED_CONN || msglen < TTRPC_HEADER_SIZE)
		return (-EINVAL);
	ttrpc_header_unpack(src, &f);
	if (f.len > TTRPC_MAX_DATA)
		return (-EMSGSIZE);
	if (f.len != msglen - TTRPC_HEADER_SIZE)
		return (-EINVAL);

	first = msglen < MUX_FIRST_MAX ? msglen : MUX_FIRST_MAX;
	fr->data[0] = src;
	fr->len[0] = first;
	fr->data[1] = src + first;
	fr->len[1] = msglen - first;
	fr->n = fr->len[1] != 0 ? 2 : 1;
	for (i = 0; i < fr->n; i++) {
		put32(fr->hdr[i], conn);
		put32(fr->hdr[i] + 4, (uint32_t)fr->len[i]);
	}
	return (0);
}

int
mux_pack(uint32_t conn, const void *msg, size_t msglen, uint8_t **out,
    size_t *outlen)
{
	struct mux_frames fr;
	size_t		 n = 0;
	uint8_t		*p;
	int		 i, rc;

	if ((rc = mux_frames(conn, msg, msglen, &fr)) != 0)
		return (rc);
	for (i = 0; i < fr.n; i++)
		n += MUX_HEADER_SIZE + fr.len[i];
	p = xmalloc(n);
	*out = p;
	*outlen = n;
	for (i = 0; i < fr.n; i++) {
		memcpy(p, fr.hdr[i], MUX_HEADER_SIZE);
		memcpy(p + MUX_HEADER_SIZE, fr.data[i], fr.len[i]);
		p += MUX_HEADER_SIZE + fr.len[i];
	}
	return (0);
}
