/*
 * fuzz-state: saved state as the daemon reads it at start: state.json
 * read from a folder by statefile.c (a bad one is moved aside) and
 * reinstated by policy_restore on a small machine. What is reinstated
 * must save as text that reinstates again, or the next start would fail.
 */

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "policy.h"
#include "statefile.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct policy	*P = NULL, *Q = NULL;
	json_error_t	 err;
	json_t		*doc = NULL, *again;
	char		 path[PATH_MAX];
	char		*text, *cause = NULL;
	const char	*dir = fuzz_dir();

	if (snprintf(path, sizeof path, "%s/%s", dir, STATEFILE_NAME) >=
	    (int)sizeof path)
		abort();
	fuzz_write(path, data, len);
	if (statefile_read(dir, &doc, &cause) != 0) {
		if (doc != NULL || cause == NULL)
			abort();
		free(cause);
		fuzz_tidy(dir);
		return (0);
	}
	fuzz_tidy(dir);
	if (doc == NULL)
		abort();
	if (policy_restore(fuzz_topology(), fuzz_config(), doc, &P,
	    &cause) != 0) {
		if (P != NULL || cause == NULL)
			abort();
		free(cause);
		json_decref(doc);
		return (0);
	}
	json_decref(doc);
	text = policy_save_text(P, NULL);
	if ((again = json_loads(text, 0, &err)) == NULL) {
		fprintf(stderr, "saved state is not JSON: %s\n", err.text);
		abort();
	}
	if (policy_restore(fuzz_topology(), fuzz_config(), again, &Q,
	    &cause) != 0) {
		fprintf(stderr, "saved state does not restore: %s\n%s\n",
		    cause, text);
		abort();
	}
	json_decref(again);
	free(text);
	policy_free(Q);
	policy_free(P);
	return (0);
}
