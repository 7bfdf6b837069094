/*
 * fuzz-pbpick: a Synchronize's payload unpacked for the fields the daemon
 * reads (pbpick.c) and by protobuf-c. Whatever pbpick takes, protobuf-c
 * takes too, into the same values in every picked field, and the
 * container specs nri.c makes of the two are the same; what pbpick does
 * not take it leaves to protobuf-c with a reason.
 */

#include <stdlib.h>
#include <string.h>

#include "nri_msg.h"
#include "pbarena.h"
#include "pbpick.h"
#include "fuzzlib.h"

#define SYNC	(&nri__pkg__api__v1alpha1__synchronize_request__descriptor)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct pbpick	*pk;
	struct pbarena		*a;
	ProtobufCMessage	*fast, *full;
	const char		*why;

	if (pk == NULL && (pk = pbpick_new(SYNC, nri_sync_picks,
	    nri_sync_npicks)) == NULL)
		abort();
	a = pbarena_new(4 * len + 256);
	full = protobuf_c_message_unpack(SYNC, NULL, len, data);
	if (pbpick_unpack(pk, data, len, a, &fast, &why) == 0) {
		if (full == NULL || !pbpick_same(pk, fast, full) ||
		    !nri_sync_specs_same((void *)fast, (void *)full))
			abort();
	} else if (why == NULL || fast != NULL)
		abort();
	protobuf_c_message_free_unpacked(full, NULL);
	pbarena_free(a);
	return (0);
}
