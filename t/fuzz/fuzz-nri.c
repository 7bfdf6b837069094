/*
 * fuzz-nri: the NRI requests that carry containers, as protobuf-c decodes
 * a ttrpc payload and nri.c hands it on: CreateContainer, UpdateContainer
 * and Synchronize made into container specs, run through the policy on a
 * small machine, and the pinnings made into the adjustment and updates
 * sent back. The first byte picks the request; the rest is its payload,
 * refused first, as nri.c does, when a string in it holds a NUL byte.
 */

#include <stdlib.h>
#include <string.h>

#include "nri_msg.h"
#include "pbarena.h"
#include "pbcheck.h"
#include "policy.h"
#include "ttrpc.h"
#include "fuzzlib.h"

#define MAX_SYNC	256	/* containers one fuzz input may sync */

/* What goes back to the runtime, packed as it would be sent. */
static void
answer(const struct policy *P, const struct policy_effects *fx,
    const NRI(Container) *ct)
{
	const struct pinning	*p;
	struct nri_adjust	 adj;
	struct nri_updates	 us;
	struct nri_upd_view	 view;
	uint8_t			*buf;
	size_t			 n, k;
	int			 i;

	memset(&adj, 0, sizeof adj);
	if (fx->self.id != NULL && nri_adjust_init(&adj, &fx->self)) {
		n = protobuf_c_message_get_packed_size(&adj.adj.base);
		if ((buf = malloc(n + 1)) == NULL)
			abort();
		if (protobuf_c_message_pack(&adj.adj.base, buf) != n)
			abort();
		free(buf);
	}
	nri_adjust_clear(&adj);
	if (ct != NULL && fx->self.id != NULL)
		(void)nri_msg_differs(ct, &fx->self);
	nri_updates_init(&us);
	for (i = 0; i < fx->nupdates; i++)
		if ((p = policy_pinning(P, fx->updates[i].id)) != NULL)
			nri_updates_add(&us, p);
	/* Each update packed by hand is protobuf-c's bytes. */
	for (k = 0; k < us.n; k++) {
		const ProtobufCMessage	*m;
		uint8_t			*want, *end, *q;

		m = &nri_updates_view(&us, k, &view)->base;
		n = protobuf_c_message_get_packed_size(m);
		if ((buf = malloc(n + 16)) == NULL ||
		    (want = malloc(n + 16)) == NULL)
			abort();
		end = nri_updates_put(&us, k, 1, buf);
		if ((size_t)(end - buf) != nri_updates_size(&us, k))
			abort();
		/* Field 1: its tag, its length, then protobuf-c's body. */
		want[0] = 1 << 3 | PBWIRE_LEN;
		q = pbwire_varint_put(n, want + 1);
		if (protobuf_c_message_pack(m, q) != n ||
		    (size_t)(q + n - want) != (size_t)(end - buf) ||
		    memcmp(want, buf, (size_t)(end - buf)) != 0)
			abort();
		free(want);
		free(buf);
	}
	nri_updates_clear(&us);
}

static void
create(struct policy *P, const NRI(PodSandbox) *pod, const NRI(Container) *ct)
{
	struct nri_spec		 ns;
	struct policy_effects	 fx;
	char			*cause = NULL;

	nri_spec_init(&ns, pod, ct);
	policy_effects_init(&fx);
	if (policy_create(P, &ns.spec, &fx, &cause) == 0)
		answer(P, &fx, ct);
	free(cause);
	policy_effects_clear(&fx);
	nri_spec_clear(&ns);
}

static void
update(struct policy *P, const NRI(UpdateContainerRequest) *req)
{
	struct policy_effects		 fx;
	long long			 request, limit;
	char				*cause = NULL;

	create(P, req->pod, req->container);
	if (policy_pinning(P, req->container->id) == NULL)
		return;
	nri_msg_update_cpu(req, &request, &limit);
	policy_effects_init(&fx);
	if (policy_update(P, req->container->id, request, limit,
	    nri_msg_update_mem(req), &fx, &cause) == 0)
		answer(P, &fx, req->container);
	free(cause);
	policy_effects_clear(&fx);
}

static void
do_sync(struct policy *P, const NRI(SynchronizeRequest) *req)
{
	struct nri_spec		 one;
	struct nri_spec_arrays	*own;
	struct container_spec	*cs;
	struct policy_effects	 fx;
	const NRI(PodSandbox)	*pod;
	const NRI(Container)	*ct;
	char			*cause = NULL;
	size_t			 i, j;
	int			 k = 0;

	if (req->n_containers > MAX_SYNC)
		return;
	own = calloc(req->n_containers + 1, sizeof *own);
	cs = calloc(req->n_containers + 1, sizeof *cs);
	if (own == NULL || cs == NULL)
		abort();
	for (i = 0; i < req->n_containers; i++) {
		ct = req->containers[i];
		if (ct == NULL || *ct->id == '\0')
			continue;
		pod = NULL;
		for (j = 0; j < req->n_pods; j++)
			if (req->pods[j] != NULL &&
			    strcmp(req->pods[j]->id, ct->pod_sandbox_id) == 0)
				pod = req->pods[j];
		nri_spec_init(&one, pod, ct);
		cs[k] = one.spec;
		own[k] = one.own;
		k++;
	}
	policy_effects_init(&fx);
	if (policy_sync(P, cs, k, &fx, &cause) == 0)
		answer(P, &fx, NULL);
	free(cause);
	policy_effects_clear(&fx);
	while (k-- > 0)
		nri_spec_arrays_clear(&own[k]);
	free(own);
	free(cs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const ProtobufCMessageDescriptor *desc[] = {
		&nri__pkg__api__v1alpha1__create_container_request__descriptor,
		&nri__pkg__api__v1alpha1__update_container_request__descriptor,
		&nri__pkg__api__v1alpha1__synchronize_request__descriptor
	};
	ProtobufCMessage	*msg;
	ProtobufCBinaryData	 b;
	struct pbarena		*mem;
	struct policy		*P = NULL;
	char			*cause = NULL;
	int			 which;

	if (len == 0)
		return (0);
	which = data[0] % 3;
	if (pbcheck_strings(desc[which], data + 1, len - 1, &cause) != 0) {
		free(cause);
		return (0);
	}
	/* In an arena of its own, as the daemon decodes a request. */
	b.data = (uint8_t *)data + 1;
	b.len = len - 1;
	if (ttrpc_payload_unpack(desc[which], &b, &msg, &mem, &cause) != 0) {
		free(cause);
		return (0);
	}
	if (policy_new(fuzz_topology(), fuzz_config(), &P, &cause) != 0)
		abort();
	switch (which) {
	case 0: {
		NRI(CreateContainerRequest) *req = (void *)msg;

		if (req->container != NULL && *req->container->id != '\0')
			create(P, req->pod, req->container);
		break;
	}
	case 1: {
		NRI(UpdateContainerRequest) *req = (void *)msg;

		if (req->container != NULL && *req->container->id != '\0')
			update(P, req);
		break;
	}
	case 2:
		do_sync(P, (void *)msg);
		break;
	}
	/* What the daemon saves after each event. */
	free(policy_save_text(P, NULL));
	policy_free(P);
	pbarena_free(mem);
	return (0);
}
