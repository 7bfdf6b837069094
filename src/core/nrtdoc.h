/*
 * The content of the node's NodeResourceTopology object (anchor 8,
 * protocols.md 7.4), from the policy's pools and what is granted now.
 */
#ifndef TOPOAWARE_NRTDOC_H
#define TOPOAWARE_NRTDOC_H

#include <jansson.h>

#include "policy.h"

/* {"attributes":[...],"zones":[...]}: a new reference, never NULL. */
json_t	*nrtdoc_build(const struct policy *);

#endif
