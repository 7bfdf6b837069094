/*
 * The cluster config source (--config-source cluster): the Go policy's
 * TopologyAwarePolicy objects, listed and watched through the API server,
 * with its scopes (fleet.h: node.<node> over group.<G> over default), the
 * chosen object's spec applied through the one reload path, this node's
 * entry on the object's status kept current, and the last config applied
 * kept in the state folder for a start without the API.
 */
#ifndef TOPOAWARE_CLUSTERCFG_H
#define TOPOAWARE_CLUSTERCFG_H

#include <stddef.h>

#include <jansson.h>

struct server;
struct kube;
struct clustercfg;
struct clustercfg_read;

/* The config kept in the state folder: the bytes last applied from the
 * cluster, and which object they came from. */
#define CLUSTERCFG_KEPT		"cluster-config.json"
#define CLUSTERCFG_KEPT_MAX	(2 * 1024 * 1024)
/* The longest wait before a status patch that failed is sent again. */
#define CLUSTERCFG_PATCH_BACKOFF_MAX_MS	60000

/*
 * The kept config of state_dir: 0 with *text (NULL when none is kept) and
 * *meta (the object's identity, or NULL), or an error and why (a damaged
 * file: the caller starts without it, loudly).
 */
int	clustercfg_kept_read(const char *state_dir, char **text, size_t *len,
	    json_t **meta, char **cause);

/* Starts listing and watching; the API's answers come on the loop. */
struct clustercfg *clustercfg_new(struct server *, struct kube *,
	    json_t *kept_meta);
void	clustercfg_free(struct clustercfg *);

/*
 * Reads the objects from the API again and applies the chosen one
 * through the reload path (SIGHUP, `topoawarectl reload`). done, if not
 * NULL, is called once on the loop with the reply or the error; the
 * returned handle cancels it (and is invalid once done has started).
 */
typedef void	(*clustercfg_done_cb)(void *arg, json_t *reply,
		    const char *error);
struct clustercfg_read *clustercfg_reread(struct clustercfg *, const char *why,
	    clustercfg_done_cb, void *arg);
void	clustercfg_read_cancel(struct clustercfg_read *);

/* The chosen object's config text as the watch has it now, and a name
 * for it, for a dry run; an error when there is none. */
int	clustercfg_current(struct clustercfg *, char **text, size_t *len,
	    char **source, char **cause);

/* {"source":"cluster","namespace","object","uid","generation","since",
 *  "from","warnings","error","statusPatch",...} */
json_t	*clustercfg_status(const struct clustercfg *);

#endif
