/* metrics.c: not written yet (a placeholder that counts nothing). */
#include "autoconf.h"

#include <stdlib.h>

#include "metrics.h"
#include "xmalloc.h"

void
metrics_inc(const char *name, const char *label, const char *value)
{
}

void
metrics_observe(const char *name, double seconds)
{
}

char *
metrics_render(void)
{
	return (xstrdup(""));
}

void
metrics_reset(void)
{
}
