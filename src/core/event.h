/*
 * The events that reach the policy, as JSON text in topoaware-sim's
 * scenario form (one op each), for the journal. Each returns a new string
 * the caller frees.
 */
#ifndef TOPOAWARE_EVENT_H
#define TOPOAWARE_EVENT_H

#include <stddef.h>

#include "policy.h"

char	*event_create(const struct container_spec *);
char	*event_update(const char *id, long long request, long long limit,
	    long long mem_limit);
/* A container started at at (ms of the wall clock). */
char	*event_start(const char *id, long long at);
char	*event_cold(long long at);
char	*event_remove(const char *id);
/*
 * read, when not NULL, holds for each spec the copy the policy made of
 * it as it read it, or NULL: a container is written from its copy rather
 * than from one made again (a Synchronize's fx->read).
 */
char	*event_sync(const struct container_spec *, int,
	    const struct cspec *const *read);
char	*event_claim(const char *uid, const struct claim_result *, int,
	    const struct claim_meta *);
char	*event_release(const char *uid);
char	*event_consumers(const char *uid, const struct claim_meta *);
char	*event_reconfigure(const char *config, size_t len);

#endif
