/*
 * fuzz-jsonpick: the API client's reading of one string out of an answer
 * (a NodeResourceTopology write's resourceVersion), checked against
 * jansson reading the whole answer as the client did before: the same
 * verdict and the same string, but where jsonpick.h says it checks less
 * (keys met twice off the path, numbers beyond jansson's range), and
 * where jansson takes a NUL byte after a value for the end of the text
 * ("false\0"), which jsonpick refuses as the stray byte it is.
 */

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "jsonpick.h"
#include "fuzzlib.h"

static const char *const path[] = { "metadata", "resourceVersion", NULL };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	json_error_t	 err;
	json_t		*j;
	const char	*want;
	char		*got = NULL, *cause = NULL;
	int		 rc;

	rc = jsonpick((const char *)data, len, path, &got, &cause);
	if ((rc == 0) != (cause == NULL) || (rc != 0 && got != NULL))
		abort();
	j = json_loadb((const char *)data, len, JSON_DECODE_ANY |
	    JSON_REJECT_DUPLICATES, &err);
	if (j != NULL && rc != 0 && memchr(data, '\0', len) != NULL) {
		json_decref(j);
	} else if (j != NULL) {
		want = json_string_value(json_object_get(json_object_get(j,
		    "metadata"), "resourceVersion"));
		if (rc != 0 || (want == NULL) != (got == NULL) ||
		    (want != NULL && strcmp(want, got) != 0))
			abort();
		json_decref(j);
	} else if (rc == 0 && strstr(err.text, "duplicate") == NULL &&
	    strstr(err.text, "too big") == NULL &&
	    strstr(err.text, "overflow") == NULL)
		abort();
	free(got);
	free(cause);
	return (0);
}
