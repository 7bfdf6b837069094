/*
 * The NRI connection multiplexer (containerd/nri pkg/net/multiplex)
 * without I/O: one stream socket, the trunk, carries several logical
 * byte streams, each a ttrpc connection. A trunk frame is an 8-byte
 * header (connection id, payload length; both 32-bit big-endian) and a
 * slice of that connection's stream.
 */
#ifndef TOPOAWARE_MUX_H
#define TOPOAWARE_MUX_H

#include <stddef.h>
#include <stdint.h>

#include "ttrpc.h"

#define MUX_HEADER_SIZE		8
/* One ttrpc frame at most: what upstream's writer cuts at. */
#define MUX_MAX_PAYLOAD		(TTRPC_HEADER_SIZE + TTRPC_MAX_DATA)
/*
 * The Go side reads a connection through a 4096-byte buffer and fails
 * with ENOMEM on a trunk frame that does not fit it, so the frame that
 * starts a ttrpc message must not be longer.
 */
#define MUX_FIRST_MAX		4096
#define MUX_MAX_CONNS		8	/* open at once; NRI uses two */

#define MUX_RESERVED_CONN	0
#define MUX_PLUGIN_CONN		1	/* runtime calls the plugin */
#define MUX_RUNTIME_CONN	2	/* plugin calls the runtime */

/*
 * data gets every payload byte of an open connection, in order, in
 * pieces of any size (a trunk frame may come in several); it returns 0
 * to go on, anything else stops the multiplexer for good and is returned
 * by mux_feed(). error, which may be NULL, hears once why the trunk
 * failed and which connection id the bad header named (0 for the
 * reserved one). Neither may free the mux.
 */
struct mux_cb {
	int	(*data)(uint32_t conn, const uint8_t *, size_t, void *);
	void	(*error)(uint32_t conn, int error, const char *cause, void *);
};

struct mux;

/* cb is copied; cb->data is required. */
struct mux	*mux_new(const struct mux_cb *, void *arg);
void		 mux_free(struct mux *);

/*
 * Payload for a connection id that is not open is dropped without a word,
 * as upstream does. Opening 0 is -EINVAL, one more than MUX_MAX_CONNS is
 * -ENOSPC; opening an open one or closing a closed one does nothing.
 */
int		 mux_open(struct mux *, uint32_t conn);
void		 mux_close(struct mux *, uint32_t conn);

/*
 * Feed trunk bytes. A frame for the reserved id 0 is garbage (-EPROTO);
 * one over MUX_MAX_PAYLOAD is oversize or garbage (-EMSGSIZE): either
 * is reported to cb->error for the id it named and fails the trunk,
 * whose later bytes can no longer be trusted to be framed. Returns 0, the
 * error or the data callback's non-zero value, with *cause (caller frees;
 * cause may be NULL). After a failure every feed fails.
 */
int		 mux_feed(struct mux *, const void *, size_t, char **cause);

/* Bytes of a trunk frame begun and not finished. */
size_t		 mux_pending(const struct mux *);

/*
 * Frame one whole ttrpc message (header and data, msglen bytes) for conn,
 * following the rules upstream's reader imposes: the first trunk frame
 * holds at most MUX_FIRST_MAX bytes of it, the rest goes in one more
 * frame, and no frame holds bytes of two messages. *out (caller frees)
 * holds *outlen bytes. -EINVAL for conn 0 or when msg is not exactly one
 * ttrpc frame; -EMSGSIZE when its data is over TTRPC_MAX_DATA.
 */
int		 mux_pack(uint32_t conn, const void *msg, size_t msglen,
		     uint8_t **out, size_t *outlen);

/* The same frames as headers and slices of msg, for a writer that queues
 * them without one more copy of the message; the same errors. */
struct mux_frames {
	int		 n;
	uint8_t		 hdr[2][MUX_HEADER_SIZE];
	const uint8_t	*data[2];
	size_t		 len[2];
};
int		 mux_frames(uint32_t conn, const void *msg, size_t msglen,
		     struct mux_frames *);

#endif
