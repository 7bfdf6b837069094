/*
 * fuzz-pbcheck: the NUL check every protobuf request passes before
 * protobuf-c decodes it (pbcheck.c walks the wire bytes by descriptor).
 * The first byte picks the message type among those the daemon takes from
 * the runtime and the kubelet, and protobuf-c decodes the same bytes.
 * Input without a NUL byte must have no string with one. Its -EBADMSG is
 * not held to protobuf-c's verdict: protobuf-c takes a tag whose varint
 * runs past 32 bits (cutting it down), which pbcheck refuses, as Go's
 * decoder does. pbcheck_scrub (a Synchronize's NULs read as '?') changes
 * only NUL bytes, into '?', and leaves what pbcheck_strings then accepts,
 * or the same structural error; on a clean message it changes nothing.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pbcheck.h"
#include "ttrpc.pb-c.h"
#include "nri.pb-c.h"
#include "dra_v1.pb-c.h"
#include "dra_v1beta1.pb-c.h"
#include "pluginregistration.pb-c.h"
#include "fuzzlib.h"

static const ProtobufCMessageDescriptor *const descs[] = {
	&ttrpc__request__descriptor,
	&ttrpc__response__descriptor,
	&nri__pkg__api__v1alpha1__configure_request__descriptor,
	&nri__pkg__api__v1alpha1__synchronize_request__descriptor,
	&nri__pkg__api__v1alpha1__create_container_request__descriptor,
	&nri__pkg__api__v1alpha1__update_container_request__descriptor,
	&nri__pkg__api__v1alpha1__stop_container_request__descriptor,
	&nri__pkg__api__v1alpha1__remove_container_request__descriptor,
	&nri__pkg__api__v1alpha1__remove_pod_sandbox_request__descriptor,
	&nri__pkg__api__v1alpha1__state_change_event__descriptor,
	&nri__pkg__api__v1alpha1__update_containers_response__descriptor,
	&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor,
	&k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor,
	&k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_request__descriptor,
	&k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_request__descriptor,
	&pluginregistration__info_request__descriptor,
	&pluginregistration__registration_status__descriptor
};
#define NDESCS	(sizeof descs / sizeof descs[0])

static void
scrub(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
    size_t len, int checked)
{
	uint8_t	*out;
	size_t	 i;
	int	 n, again;

	if ((out = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	n = pbcheck_scrub(desc, data, out, len, '?');
	for (i = 0; i < len; i++)
		if (out[i] != data[i] && (data[i] != '\0' || out[i] != '?'))
			abort();
	again = pbcheck_strings(desc, out, len, NULL);
	if ((checked == 0 && n != 0) || (checked == -EILSEQ && n == 0) ||
	    (n >= 0 && again != 0) || (n < 0 && again != n))
		abort();
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const ProtobufCMessageDescriptor	*desc;
	ProtobufCMessage			*msg;
	char					*cause = NULL;
	int					 rc;

	if (len == 0)
		return (0);
	desc = descs[data[0] % NDESCS];
	data++;
	len--;
	rc = pbcheck_strings(desc, data, len, &cause);
	if (rc != 0 && cause == NULL)
		abort();
	msg = protobuf_c_message_unpack(desc, NULL, len, data);
	if (rc == -EILSEQ && memchr(data, '\0', len) == NULL)
		abort();
	if (msg != NULL)
		protobuf_c_message_free_unpacked(msg, NULL);
	free(cause);
	scrub(desc, data, len, rc);
	return (0);
}
