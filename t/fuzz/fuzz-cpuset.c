/*
 * fuzz-cpuset: cpuset text, the Linux list form of sysfs cpulists, the
 * config and the saved state ("0-3,8,10-11"). What parses must format
 * back to text that parses to the same set.
 */

#include <stdio.h>
#include <stdlib.h>

#include "cpuset.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct cpuset	 a = CPUSET_INITIALIZER, b = CPUSET_INITIALIZER;
	char		*text, *out, *cause = NULL;

	text = fuzz_str(data, len);
	if (cpuset_parse(&a, text, &cause) == 0) {
		out = cpuset_format(&a);
		if (cpuset_parse(&b, out, &cause) != 0 ||
		    !cpuset_equal(&a, &b)) {
			fprintf(stderr, "\"%s\" formats as \"%s\": %s\n", text,
			    out, cause != NULL ? cause : "a different set");
			abort();
		}
		free(out);
	}
	free(cause);
	cpuset_clear(&a);
	cpuset_clear(&b);
	free(text);
	return (0);
}
