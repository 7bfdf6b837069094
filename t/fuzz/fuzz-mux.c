/*
 * fuzz-mux: the NRI multiplexer's trunk framing as the runtime's socket
 * delivers it, in pieces of arbitrary size. The first byte chooses where
 * the rest is cut into feeds, so that headers split across reads are
 * covered too.
 */

#include <stdlib.h>

#include "mux.h"
#include "fuzzlib.h"

struct sink {
	size_t	bytes[MUX_MAX_CONNS + 3];
};

static int
on_data(uint32_t conn, const uint8_t *p, size_t len, void *arg)
{
	struct sink	*s = arg;

	/* Only open connections get data. */
	if (conn != MUX_PLUGIN_CONN && conn != MUX_RUNTIME_CONN)
		abort();
	if (len != 0 && p == NULL)
		abort();
	s->bytes[conn] += len;
	return (0);
}

static void
on_error(uint32_t conn, int error, const char *cause, void *arg)
{
	(void)conn;
	(void)arg;
	if (error >= 0 || cause == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct mux_cb	 cb = { on_data, on_error };
	struct sink	 s = { { 0 } }, s2 = { { 0 } };
	struct mux	*m;
	const uint8_t	*msg;
	uint8_t		*out;
	size_t		 step, n, msglen, outlen;
	char		*cause = NULL;
	int		 rc = 0;

	if (len == 0)
		return (0);
	step = data[0] != 0 ? data[0] : len;
	data++;
	len--;
	msg = data;
	msglen = len;
	m = mux_new(&cb, &s);
	if (mux_open(m, MUX_PLUGIN_CONN) != 0 ||
	    mux_open(m, MUX_RUNTIME_CONN) != 0)
		abort();
	while (len > 0 && rc == 0) {
		n = len < step ? len : step;
		rc = mux_feed(m, data, n, &cause);
		free(cause);
		cause = NULL;
		data += n;
		len -= n;
	}
	/* A failed trunk stays failed. */
	if (rc != 0 && mux_feed(m, "", 0, &cause) == 0)
		abort();
	free(cause);
	(void)mux_pending(m);
	mux_close(m, MUX_RUNTIME_CONN);
	mux_free(m);

	/* Whatever mux_pack frames must come out whole on the other side. */
	if (mux_pack(MUX_PLUGIN_CONN, msg, msglen, &out, &outlen) == 0) {
		m = mux_new(&cb, &s2);
		if (mux_open(m, MUX_PLUGIN_CONN) != 0 ||
		    mux_feed(m, out, outlen, NULL) != 0 ||
		    s2.bytes[MUX_PLUGIN_CONN] != msglen || mux_pending(m) != 0)
			abort();
		mux_free(m);
		free(out);
	}
	return (0);
}
