/*
 * fuzz-registration: the kubelet's plugin registration calls, GetInfo
 * and NotifyRegistrationStatus (the first byte picks one), with the rest
 * as the request message, sent as a real gRPC call to registration.c's
 * server on its socket.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "registration.h"
#include "h2fuzz.h"
#include "fuzzlib.h"

#define H2_FUZZ_MAX	(60 * 1024)	/* within the first flow window */

static struct registration	*reg;

static const char *const methods[] = {
	"/pluginregistration.Registration/GetInfo",
	"/pluginregistration.Registration/NotifyRegistrationStatus"
};

static void
notified(void *arg, int registered)
{
	(void)arg;
	(void)registered;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t		*call;
	size_t		 clen;
	char		*cause = NULL;

	if (len == 0 || len > H2_FUZZ_MAX)
		return (0);
	if (reg == NULL) {
		reg = registration_new(h2fuzz_base(), fuzz_dir(),
		    "fuzz.example.com", "/nonexistent/dra.sock");
		registration_on_notify(reg, notified, NULL);
		if (registration_start(reg, &cause) != 0) {
			fprintf(stderr, "fuzz: %s\n", cause);
			abort();
		}
	}
	call = h2fuzz_call(methods[data[0] % 2], data + 1, len - 1, &clen);
	h2fuzz_exchange(registration_socket(reg), call, clen);
	free(call);
	(void)registration_registered(reg);
	(void)registration_error(reg);
	return (0);
}
