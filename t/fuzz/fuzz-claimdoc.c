/*
 * fuzz-claimdoc: a ResourceClaim as the API server answers it, parsed as
 * kube.c parses answers, read as dra.c reads it for the kubelet's UID
 * (its results and consumers, or its consumers alone when the claim is
 * read again), and claimed on a small machine as the policy would.
 */

#include <stdlib.h>

#include <jansson.h>

#include "claimdoc.h"
#include "policy.h"
#include "fuzzlib.h"

#define UID	"0d6f3c2a-1b2c-4d5e-8f90-123456789abc"
#define DRIVER	"topology-aware.nri.io"
#define NODE	"node-a"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct claim_result	 res[CLAIMDOC_MAX_RESULTS];
	struct claim_meta	 meta;
	struct policy_effects	 fx;
	struct claimdoc		*doc = NULL, *again = NULL;
	struct policy		*P = NULL;
	json_error_t		 err;
	json_t			*body;
	char			*cause = NULL;

	body = json_loadb((const char *)data, len, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES, &err);
	if (body == NULL)
		return (0);
	if (claimdoc_parse_consumers(body, UID, &again, &cause) != 0) {
		if (again != NULL || cause == NULL)
			abort();
		free(cause);
		cause = NULL;
	}
	if (claimdoc_parse(body, UID, DRIVER, NODE, &doc, &cause) != 0) {
		if (doc != NULL || cause == NULL)
			abort();
		goto out;
	}
	if (doc->n < 1 || doc->n > CLAIMDOC_MAX_RESULTS)
		abort();
	claimdoc_policy_results(doc, res);
	claimdoc_policy_meta(doc, &meta);
	if (policy_new(fuzz_topology(), fuzz_config(), &P, &cause) != 0)
		abort();
	policy_effects_init(&fx);
	if (policy_claim(P, UID, res, doc->n, &meta, &fx, &cause) == 0) {
		if (again != NULL) {
			policy_effects_clear(&fx);
			policy_effects_init(&fx);
			claimdoc_policy_meta(again, &meta);
			if (policy_claim_consumers(P, UID, &meta, &fx,
			    &cause) != 0)
				free(cause);
			cause = NULL;
		}
		policy_effects_clear(&fx);
		policy_effects_init(&fx);
		if (policy_release(P, UID, &fx) != 0)
			abort();
	}
	policy_effects_clear(&fx);
	policy_free(P);
out:
	free(cause);
	claimdoc_free(again);
	claimdoc_free(doc);
	json_decref(body);
	return (0);
}
