/* admin.c: not written yet (a placeholder that listens nowhere). */
#include "autoconf.h"

#include <stdlib.h>

#include "admin.h"

int
admin_new(struct server *srv, const char *path, struct admin **out,
    char **cause)
{
	*out = NULL;
	return (0);
}

void
admin_free(struct admin *a)
{
}
