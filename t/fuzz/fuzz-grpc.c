/*
 * fuzz-grpc: the gRPC message layer under HTTP/2: a unary request body
 * gathered from DATA chunks (the first byte cuts the rest into chunks),
 * and the same bytes as the grpc-timeout and grpc-message header values
 * a client sends.
 */

#include <stdlib.h>
#include <string.h>

#include "grpc.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct grpc_reader	 r;
	const uint8_t		*msg;
	size_t			 step, n, rest, msglen;
	char			*text, *dec, *dec2, *enc, *cause = NULL;
	int64_t			 us;
	int			 rc = 0;

	if (len == 0)
		return (0);
	step = data[0] != 0 ? data[0] : len;

	grpc_reader_init(&r, 64 * 1024);
	for (rest = len - 1; rest > 0 && rc == 0; rest -= n) {
		n = rest < step ? rest : step;
		rc = grpc_reader_feed(&r, data + len - rest, n, &cause);
		free(cause);
		cause = NULL;
	}
	if (rc == 0) {
		if (grpc_reader_finish(&r, &msg, &msglen, &cause) == 0 &&
		    (msglen + GRPC_PREFIX_SIZE != len - 1 ||
		    (msglen != 0 && memcmp(msg, data + 1 + GRPC_PREFIX_SIZE,
		    msglen) != 0)))
			abort();
		free(cause);
	} else
		(void)grpc_status_name(grpc_status_for_error(rc));
	grpc_reader_clear(&r);

	text = fuzz_str(data, len);
	(void)grpc_timeout_parse(text, &us);
	/* What we encode, a client decodes back to what we meant. */
	dec = grpc_pct_decode(text);
	enc = grpc_pct_encode(dec, 0);
	dec2 = grpc_pct_decode(enc);
	if (strcmp(dec, dec2) != 0)
		abort();
	free(dec2);
	free(enc);
	free(dec);
	enc = grpc_pct_encode(text, GRPC_MESSAGE_MAX);
	if (strlen(enc) > GRPC_MESSAGE_MAX)
		abort();
	free(enc);
	free(text);
	return (0);
}
