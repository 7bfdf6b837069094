/*
 * fuzz-dra: the kubelet's NodePrepareResources and NodeUnprepareResources
 * requests, v1 and v1beta1 (the first byte picks one of the four), as
 * protobuf-c decodes them (after the NUL check of every call) and dra.c
 * checks each claim before it reads it from the API server or writes a
 * CDI spec for it.
 */

#include <stdlib.h>
#include <string.h>

#include "cdi.h"
#include "dra.h"
#include "dra_v1.pb-c.h"
#include "dra_v1beta1.pb-c.h"
#include "pbcheck.h"
#include "fuzzlib.h"

typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim	Claim;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest
    PrepareReq;
typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodeUnprepareResourcesRequest
    UnprepareReq;

static void
check_claims(Claim **claims, size_t n)
{
	char	*cause = NULL;
	size_t	 i, j;

	if (n > DRA_MAX_CLAIMS)
		return;
	for (i = 0; i < n; i++) {
		if (claims[i] == NULL || claims[i]->uid == NULL ||
		    claims[i]->namespace_ == NULL || claims[i]->name == NULL)
			abort();
		for (j = 0; j < i; j++)
			if (strcmp(claims[j]->uid, claims[i]->uid) == 0)
				break;
		if (j < i)
			continue;
		if (cdi_check_uid(claims[i]->uid, &cause) != 0) {
			if (cause == NULL)
				abort();
			free(cause);
			cause = NULL;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const ProtobufCMessageDescriptor *desc[] = {
		&k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor,
		&k8s__io__kubelet__pkg__apis__dra__v1__node_unprepare_resources_request__descriptor,
		&k8s__io__kubelet__pkg__apis__dra__v1beta1__node_prepare_resources_request__descriptor,
		&k8s__io__kubelet__pkg__apis__dra__v1beta1__node_unprepare_resources_request__descriptor
	};
	ProtobufCMessage	*msg, *v1;
	char			*cause = NULL;
	int			 which;

	if (len == 0)
		return (0);
	which = data[0] % 4;
	if (pbcheck_strings(desc[which], data + 1, len - 1, &cause) != 0) {
		free(cause);
		return (0);
	}
	if ((msg = protobuf_c_message_unpack(desc[which], NULL, len - 1,
	    data + 1)) == NULL)
		return (0);
	/* The daemon decodes both versions with the v1 messages: the same
	 * bytes must decode there too. */
	if ((v1 = protobuf_c_message_unpack(desc[which % 2], NULL, len - 1,
	    data + 1)) == NULL)
		abort();
	if (which % 2 == 0)
		check_claims(((PrepareReq *)v1)->claims,
		    ((PrepareReq *)v1)->n_claims);
	else
		check_claims(((UnprepareReq *)v1)->claims,
		    ((UnprepareReq *)v1)->n_claims);
	protobuf_c_message_free_unpacked(v1, NULL);
	protobuf_c_message_free_unpacked(msg, NULL);
	return (0);
}
