/*
 * fuzz-config: a config document as the daemon reads it at start and on
 * reload: parsed and validated, checked as a reload of the defaults,
 * resolved against a small machine and made into a policy. What parses
 * must dump to a document that parses again.
 */

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "config.h"
#include "cpuset.h"
#include "policy.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct cpuset	 allowed = CPUSET_INITIALIZER;
	struct cpuset	 reserved = CPUSET_INITIALIZER;
	struct config	*cfg = NULL, *again = NULL;
	struct policy	*P = NULL;
	json_t		*dump;
	char		*cause = NULL;

	if (config_parse((const char *)data, len, &cfg, &cause) != 0) {
		if (cfg != NULL || cause == NULL)
			abort();
		free(cause);
		return (0);
	}
	dump = config_dump(cfg);
	if (config_from_json(dump, &again, &cause) != 0) {
		fprintf(stderr, "the dump does not parse: %s\n", cause);
		abort();
	}
	json_decref(dump);
	config_free(again);
	if (config_check_reload(fuzz_config(), cfg, &cause) != 0)
		free(cause);
	cause = NULL;
	if (config_resolve_cpus(cfg, fuzz_topology(), &allowed, &reserved,
	    &cause) != 0)
		free(cause);
	cause = NULL;
	if (policy_new(fuzz_topology(), cfg, &P, &cause) == 0)
		policy_free(P);
	free(cause);
	cpuset_clear(&allowed);
	cpuset_clear(&reserved);
	config_free(cfg);
	return (0);
}
