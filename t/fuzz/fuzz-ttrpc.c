/*
 * fuzz-ttrpc: ttrpc framing as one multiplexed connection carries it,
 * and each frame through what the server and the client side do with it:
 * the server's stream checks, the Request and Response envelopes and a
 * payload decode. The first byte cuts the rest into feeds.
 */

#include <stdlib.h>

#include "ttrpc.h"
#include "nri.pb-c.h"
#include "fuzzlib.h"

struct state {
	struct ttrpc_streams	 streams;
	int			 frames;
};

static void
decode_payload(const ProtobufCBinaryData *payload)
{
	ProtobufCMessage	*msg = NULL;
	char			*cause = NULL;

	if (ttrpc_payload_unpack(
	    &nri__pkg__api__v1alpha1__update_containers_response__descriptor,
	    payload, &msg, NULL, &cause) == 0)
		protobuf_c_message_free_unpacked(msg, NULL);
	free(cause);
}

static int
on_frame(const struct ttrpc_frame *f, void *arg)
{
	struct state		*st = arg;
	Ttrpc__Request		*req;
	Ttrpc__Response		*resp;
	char			*why = NULL, *cause = NULL;
	int			 code;

	if (f->oversize ? f->data != NULL : (f->len != 0 && f->data == NULL))
		abort();
	switch (ttrpc_server_check(&st->streams, f, &code, &why)) {
	case TTRPC_HANDLE:
		if (ttrpc_request_unpack(f, &req, &cause) == 0) {
			decode_payload(&req->payload);
			ttrpc_request_free(req);
		}
		break;
	case TTRPC_REJECT:
		(void)ttrpc_code_name(code);
		break;
	case TTRPC_IGNORE:
		if (ttrpc_response_unpack(f, &resp, &cause) == 0) {
			(void)ttrpc_code_name(ttrpc_response_code(resp));
			decode_payload(&resp->payload);
			ttrpc__response__free_unpacked(resp, NULL);
		}
		break;
	}
	free(why);
	free(cause);
	/* Stop, as a callback may, after a number of frames. */
	return (++st->frames > 1000 ? -1 : 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct state		 st;
	struct ttrpc_reader	*r;
	size_t			 step, n;
	char			*cause = NULL;
	int			 rc = 0;

	if (len == 0)
		return (0);
	step = data[0] != 0 ? data[0] : len;
	data++;
	len--;
	ttrpc_streams_init(&st.streams);
	st.frames = 0;
	r = ttrpc_reader_new(on_frame, &st);
	while (len > 0 && rc == 0) {
		n = len < step ? len : step;
		rc = ttrpc_reader_feed(r, data, n, &cause);
		free(cause);
		cause = NULL;
		data += n;
		len -= n;
	}
	(void)ttrpc_reader_pending(r);
	ttrpc_reader_free(r);
	return (0);
}
