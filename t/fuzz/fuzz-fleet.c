/*
 * fuzz-fleet: what the cluster config source reads: a TopologyAwarePolicy
 * spec from the API server (made into config text that the config parser
 * then reads), a Node object for its group label, and the config kept in
 * the state folder. A kept document that parses must be written back to
 * the same config bytes.
 */

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "fleet.h"
#include "fuzzlib.h"

static void
fuzz_spec(const json_t *spec)
{
	struct config	*cfg = NULL;
	char		*text = NULL, *cause = NULL, **warnings = NULL;
	size_t		 len = 0, nwarnings = 0;
	json_t		*patch;

	if (fleet_spec_config(spec, &text, &len, &warnings, &nwarnings,
	    &cause) != 0) {
		if (text != NULL || cause == NULL)
			abort();
		free(cause);
		return;
	}
	if (config_parse(text, len, &cfg, &cause) == 0)
		config_free(cfg);
	else
		free(cause);
	patch = fleet_status_patch("node-a", 1, 1, NULL, warnings, nwarnings,
	    0);
	if (patch == NULL)
		abort();
	json_decref(patch);
	fleet_warnings_free(warnings, nwarnings);
	free(text);
}

static void
fuzz_kept(const uint8_t *data, size_t size)
{
	json_t		*meta = NULL, *again_meta = NULL, *v;
	char		*text = NULL, *cause = NULL, *doc, *again = NULL;
	size_t		 len = 0, again_len = 0;

	if (fleet_kept_parse((const char *)data, size, &text, &len, &meta,
	    &cause) != 0) {
		if (text != NULL || meta != NULL || cause == NULL)
			abort();
		free(cause);
		return;
	}
	v = json_object_get(meta, "generation");
	doc = fleet_kept_doc(json_string_value(json_object_get(meta,
	    "namespace")), json_string_value(json_object_get(meta, "name")),
	    NULL, json_is_integer(v) ? json_integer_value(v) : 0, NULL, 0,
	    text, len, NULL, 0);
	if (fleet_kept_parse(doc, strlen(doc), &again, &again_len,
	    &again_meta, &cause) != 0 || again_len != len ||
	    memcmp(again, text, len) != 0)
		abort();
	json_decref(again_meta);
	free(again);
	free(doc);
	json_decref(meta);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t		*doc;
	const char	*group, *dep;
	int		 invalid;

	fuzz_kept(data, size);
	doc = json_loadb((const char *)data, size, 0, NULL);
	if (doc == NULL)
		return (0);
	fuzz_spec(doc);
	fuzz_spec(json_object_get(doc, "spec"));
	group = fleet_group(doc, NULL, &dep, &invalid);
	if (group != NULL && invalid)
		abort();
	json_decref(doc);
	return (0);
}
