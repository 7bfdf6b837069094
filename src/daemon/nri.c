/* nri.c: not written yet (a placeholder that connects nowhere). */
#include "autoconf.h"

#include <errno.h>
#include <stdlib.h>

#include <jansson.h>

#include "nri.h"

int
nri_new(struct server *srv, struct nri **out, char **cause)
{
	*out = NULL;
	return (0);
}

void
nri_free(struct nri *n)
{
}

int
nri_connected(const struct nri *n)
{
	return (0);
}

int
nri_synchronized(const struct nri *n)
{
	return (0);
}

void
nri_push_updates(struct nri *n, const struct pinning *p, int np)
{
}

json_t *
nri_status(const struct nri *n)
{
	return (json_pack("{s:b, s:s}", "connected", 0, "error",
	    "the NRI plugin is not implemented yet"));
}
