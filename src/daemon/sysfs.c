/* sysfs.c: not written yet. */
#include "autoconf.h"
#include <errno.h>
#include "sysfs.h"
#include "xmalloc.h"
int
sysfs_discover(const char *root, struct topology **t, char **cause)
{
	*t = NULL;
	xasprintf(cause, "%s: discovery is not written yet", root);
	return (-ENOSYS);
}
