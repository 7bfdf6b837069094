/*
 * JSON views of the model for people and tools: the shapes topoaware-sim
 * --show prints and the admin socket answers. Each returns a new reference.
 */
#ifndef TOPOAWARE_VIEW_H
#define TOPOAWARE_VIEW_H

#include <jansson.h>

#include "dradev.h"
#include "pool.h"
#include "topology.h"

/* {"online","isolated","packages":[{"id","cpus"}],"nodes":[{"id","cpus",
 *  "memory","distances"}],"cores","threadsPerCore"} */
json_t	*view_topology(const struct topology *);
/* [{"id","name","parent","depth","cpus","isolated","sharable","reserved"}] */
json_t	*view_pools(const struct pool_tree *);
/* [{"name","numaNode","socketID","smtEnabled","cpu"}] */
json_t	*view_devices(const struct dradev *, int);
/* A cpuset as a JSON string in list form. */
json_t	*view_cpuset(const struct cpuset *);

#endif
