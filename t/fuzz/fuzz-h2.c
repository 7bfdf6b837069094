/*
 * fuzz-h2: the kubelet-facing HTTP/2 server (h2.c over nghttp2) fed raw
 * client bytes through its real unix socket: preface, SETTINGS, HEADERS
 * with HPACK, DATA carrying gRPC messages, resets, pings, GOAWAY. Its
 * methods answer at once, fail, or hold the call until the connection is
 * gone, as a DRA prepare waiting on the API server does.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "grpc.h"
#include "h2.h"
#include "h2fuzz.h"
#include "fuzzlib.h"

#define H2_FUZZ_MAX	(64 * 1024)

static struct h2_server	*srv;
static char		 path[PATH_MAX];
static struct h2_call	*held;

static void
echo(struct h2_call *call, const uint8_t *msg, size_t len, void *arg)
{
	(void)arg;
	h2_reply(call, msg, len);
}

static void
fail(struct h2_call *call, const uint8_t *msg, size_t len, void *arg)
{
	(void)msg;
	(void)arg;
	h2_reply_error(call, GRPC_STATUS_INVALID_ARGUMENT, "%zu bytes", len);
}

static void
later(struct h2_call *call, const uint8_t *msg, size_t len, void *arg)
{
	(void)msg;
	(void)len;
	(void)arg;
	if (held != NULL)
		h2_reply_error(held, GRPC_STATUS_ABORTED, "superseded");
	held = call;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char	*cause = NULL;

	if (len > H2_FUZZ_MAX)
		return (0);
	if (srv == NULL) {
		srv = h2_server_new(h2fuzz_base(), "fuzz");
		h2_server_add(srv, "/fuzz.Test/Echo", echo, NULL);
		h2_server_add(srv, "/fuzz.Test/Fail", fail, NULL);
		h2_server_add(srv, "/fuzz.Test/Later", later, NULL);
		if (snprintf(path, sizeof path, "%s/h2.sock", fuzz_dir()) >=
		    (int)sizeof path ||
		    h2_server_listen(srv, path, &cause) != 0) {
			fprintf(stderr, "fuzz: %s\n", cause);
			abort();
		}
	}
	h2fuzz_exchange(path, data, len);
	/* Its client is gone: the answer must be dropped quietly. */
	if (held != NULL) {
		if (h2_call_alive(held))
			abort();
		h2_reply(held, "", 0);
		held = NULL;
	}
	return (0);
}
