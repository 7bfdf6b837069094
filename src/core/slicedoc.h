/*
 * The ResourceSlice documents of our DRA devices (SPEC R-SLICE,
 * protocols.md 7.1): one pool named after the node, its devices in slices
 * of at most SLICEDOC_MAX_DEVICES, and the test of whether an object the
 * API server holds already says what we would write.
 */
#ifndef TOPOAWARE_SLICEDOC_H
#define TOPOAWARE_SLICEDOC_H

#include <jansson.h>

#include "dradev.h"

/* Kubernetes' limit of devices per slice. */
#define SLICEDOC_MAX_DEVICES	128

/* The attribute and capacity names of a device (anchor 9.2). */
#define SLICEDOC_ATTR_NUMA	"resource.kubernetes.io/numaNode"
#define SLICEDOC_ATTR_SOCKET	"dra.cpu/socketID"
#define SLICEDOC_ATTR_SMT	"dra.cpu/smtEnabled"
#define SLICEDOC_CAP_CPU	"dra.cpu/cpu"

/* What one publication of the pool is made of; nothing is copied. */
struct slicedoc_pool {
	const char		*driver;
	const char		*node;		/* node and pool name */
	const char		*node_uid;	/* NULL or "": no owner */
	long long		 generation;
	const struct dradev	*devs;		/* in publishing order */
	int			 ndevs;
};

/* How many slices ndevs devices take: never fewer than one, because a
 * pool without devices is still published as one empty slice. */
int	 slicedoc_count(int ndevs);

/* The metadata.generateName of our slices, "<driver>-<node>-", made a
 * valid lower-case DNS subdomain whatever the node name holds and short
 * enough that the API server's random suffix does not cut it. Caller
 * frees. */
char	*slicedoc_generate_name(const char *driver, const char *node);

/* Slice number index (0 <= index < slicedoc_count) of the pool as a whole
 * ResourceSlice object without metadata.name: a new reference. */
json_t	*slicedoc_build(const struct slicedoc_pool *, int index);

/* The spec.pool.generation of a slice object, -1 when it has none. */
long long slicedoc_generation(const json_t *);

/* The name of the first device of a slice object, NULL when it has none
 * (borrowed from the object). */
const char *slicedoc_first_device(const json_t *);

/*
 * 1 when the object "have" (as the API server returned it) carries
 * everything of "want" (from slicedoc_build): the same spec, where fields
 * the server added are ignored as long as they are empty defaults (null,
 * false, "", [], {}), and, if want names an owner, an ownerReference with
 * its uid. Metadata besides the owner is not compared. 0 otherwise.
 */
int	 slicedoc_matches(const json_t *have, const json_t *want);

#endif
