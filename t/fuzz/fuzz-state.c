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

#include "statefile.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	json_t		*doc = NULL;
	char		 path[PATH_MAX];
	char		*cause = NULL;
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
	fuzz_restore(doc);
	json_decref(doc);
	return (0);
}
