/*
 * fuzz-quantity: Kubernetes quantities ("1500m", "2", "1.5", "2Ki") as
 * the config's CPU resources and claims' consumed capacity give them.
 */

#include <stdlib.h>

#include "quantity.h"
#include "fuzzlib.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	long long	 milli;
	char		*text, *cause = NULL;

	text = fuzz_str(data, len);
	/* Negative values are refused: one given back wrapped around. */
	if (quantity_parse_milli(text, &milli, &cause) == 0 && milli < 0)
		abort();
	free(cause);
	free(text);
	return (0);
}
