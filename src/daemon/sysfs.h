/*
 * Discovery of the machine's topology from a sysfs tree. The root is the
 * folder that holds sys/ ("/" on a real machine).
 */
#ifndef TOPOAWARE_SYSFS_H
#define TOPOAWARE_SYSFS_H

#include "topology.h"

/* 0 and a finished topology (caller frees), or a negative errno and
 * *cause naming the file that is missing or malformed (caller frees). */
int	sysfs_discover(const char *root, struct topology **, char **cause);

#endif
