/*
 * The resources.sh exports (R-STATE-4), written after the answers of a
 * loop turn: once per container however often it moved, and only when
 * what it holds changes. A shared container's folder is a link to its
 * pool's, so moving a pool's shared CPUs rewrites one file, not one per
 * container. No libevent: the server decides when to flush.
 */
#ifndef TOPOAWARE_EXPORTS_H
#define TOPOAWARE_EXPORTS_H

#include "policy.h"

struct exports;

struct exports	*exports_new(const char *state_dir);
void		 exports_free(struct exports *);
/* Queues a container's file to be written (or removed); 1 when it is
 * the first thing queued since the last flush. */
int		 exports_later(struct exports *, const char *id, int remove);
/* Queues a pool's file, which its shared containers' folders link to
 * (policy_update's pool_file); 1 as for exports_later. */
int		 exports_pool_later(struct exports *, const char *pool);
/* resfile_prune with the spares: removes the files of the containers
 * keep() does not want; how many went, or a negative errno and *cause. */
int		 exports_prune(struct exports *,
		    int (*keep)(const char *id, void *), void *arg,
		    char **cause);
/* Writes or removes everything queued, as the policy says now. */
void		 exports_flush(struct exports *, const struct policy *);

#endif
