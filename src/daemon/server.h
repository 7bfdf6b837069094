/*
 * The daemon's one state: the event loop, the machine, the config in
 * force, the policy, and the endpoints. Every endpoint turns its input into
 * one of the server_* operations below, which call the policy, save the
 * state before anyone is told (R-STATE-1), write the exported files and
 * push the updates that do not travel in a reply. Nothing here blocks.
 */
#ifndef TOPOAWARE_SERVER_H
#define TOPOAWARE_SERVER_H

#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "config.h"
#include "policy.h"
#include "topology.h"

/* Named limits (topoawared(8) lists them). */
#define SERVER_MAX_ADMIN_CONNS	16
#define SERVER_CONFIG_MAX	(1024 * 1024)	/* config file bytes */

/* Exit status when starting needs a person (EX_CONFIG): the unit does not
 * restart on it. */
#define SERVER_EXIT_CONFIG	78

struct server_opts {
	const char	*sysfs_root;
	const char	*config_path;
	const char	*state_dir;
	const char	*nri_socket;
	int		 nri_index;
	const char	*admin_socket;
	const char	*kubelet_dir;
	const char	*cdi_dir;
	const char	*kubeconfig;
	const char	*node_name;
	int		 config_cluster;	/* --config-source cluster */
	const char	*config_namespace;	/* of the objects */
	const char	*config_group_label;	/* the Node's group label */
	int		 nri_backoff_max_ms;	/* reconnect backoff cap */
	int		 watch_debounce_ms;	/* config file quiet period */
	int		 api_timeout_ms;	/* per API server attempt */
	int		 api_retries;		/* attempts after the first */
	int		 api_backoff_ms;	/* first retry delay, doubling */
	int		 slice_resync_ms;	/* ResourceSlice check interval */
	int		 nrt_debounce_ms;	/* NRT quiet period after changes */
	int		 foreground;
	int		 verbosity;
};

struct nri;
struct admin;
struct http;
struct watch;
struct kube;
struct dra;
struct slice;
struct nrt;
struct claimcheck;
struct journal;
struct exports;
struct gate;
struct policy_effects;
struct strmap;

struct server {
	struct event_base	*base;
	struct server_opts	 opts;
	struct topology		*topo;
	struct config		*cfg;
	struct policy		*policy;
	time_t			 started;
	unsigned		 generation;	/* configGeneration */
	time_t			 cfg_since;	/* generation's start */
	struct {
		int		 ok;
		int		 unchanged;	/* the file held that config */
		char		*error;
		unsigned	 generation;
		time_t		 when;
	}			 last_reload;
	char			*last_error;
	int			 stopping;
	/* A change is in memory that the journal does not hold: a
	 * removal whose record failed, or a failed sync. The next commit
	 * writes a whole snapshot first, or is refused. */
	int			 need_snapshot;
	int			 trim;		/* give freed pages back after a turn */
	struct journal		*journal;
	int			 journal_damaged;	/* keep CDI specs */
	struct exports		*exports;	/* resources.sh to write */
	struct spares		*cdi_spares;	/* of opts.cdi_dir (cdi.h) */
	/* The group commit: peers' output waits behind the gate until the
	 * turn's records are durable; turn[] undoes the turn's changes. The
	 * end of a turn (ev_turn) syncs and opens the gate, which writes
	 * the answers out; then come exports, compaction and trim. */
	struct gate		*gate;
	struct event		*ev_turn;
	struct event		*ev_cold;	/* the next cold start's end */
	struct policy_effects	**turn;
	int			 turn_n;
	int			 turn_cap;

	struct event		*ev_sigterm;
	struct event		*ev_sigint;
	struct event		*ev_sighup;
	struct event		*ev_watchdog;

	struct nri		*nri;
	struct admin		*admin;
	struct http		*http;		/* instrumentation.httpEndpoint */
	struct watch		*watch;
	struct kube		*kube;		/* NULL: kube_error says why */
	char			*kube_error;
	struct dra		*dra;		/* NULL when dra.enabled is off */
	struct slice		*slice;
	struct nrt		*nrt;
	struct claimcheck	*claimcheck;	/* NULL without DRA */
	struct clustercfg	*cluster;	/* NULL: the config file */
	json_t			*cluster_kept;	/* the kept config's object */
	struct {
		time_t		 window;	/* refused pins logged since */
		int		 logged;
		int		 suppressed;
	}			 refused_log;
	char			*cfg_text;	/* the file in force; NULL: none */
	size_t			 cfg_textlen;
	char			*cfg_refused;	/* refused for what it says */
	size_t			 cfg_refusedlen;
};

/*
 * main.c hands over the options; server_start builds and listens.
 * server_init gives -ENOTRECOVERABLE when the saved claims cannot keep
 * their CPUs, server_start when the cluster config source has no way to
 * the API server: a person must choose (main exits SERVER_EXIT_CONFIG).
 */
int	server_init(struct server *, const struct server_opts *, char **);
int	server_start(struct server *, char **);
void	server_clear(struct server *);
/* Parse and check the config file against the machine, for `-n`. */
int	server_check_config(const struct server_opts *, char **);

/*
 * The single reload path (SIGHUP, file watch, `topoawarectl reload`) with
 * every rule: 0 when the file's config is in force (last_reload.unchanged
 * when it already was), else a negative errno and why.
 */
int	server_reload(struct server *, const char *why, char **);
/* The same path for config bytes from elsewhere (the cluster source),
 * source naming them in messages. */
int	server_reload_text(struct server *, const char *why,
	    const char *source, const char *text, size_t len, char **);
/*
 * A dry run of the reload of text (len bytes; NULL: the config file, by
 * the same rules): what it would do, then undone, nothing else changed.
 * {"dryRun":true,"generation","unchanged","refused":why|null,"warnings",
 * "containers","claims"} as policy_moves gives them; caller owns it.
 */
json_t	*server_reload_dry(struct server *, const char *text, size_t len);

/*
 * The operations. Each returns 0 with the effects filled, or an error with
 * *cause; on error nothing changed (the policy's transaction, and a change
 * that could not be saved is undone where that is possible).
 */
int	server_create(struct server *, const struct container_spec *,
	    struct policy_effects *, char **);
int	server_update(struct server *, const char *, long long, long long,
	    long long, struct policy_effects *, char **);
int	server_remove(struct server *, const char *, struct policy_effects *,
	    char **);
/* The runtime started a container: its cold start, if any, begins. */
int	server_started(struct server *, const char *,
	    struct policy_effects *, char **);
int	server_sync(struct server *, const struct container_spec *, int,
	    struct policy_effects *, char **);
int	server_claim(struct server *, const char *,
	    const struct claim_result *, int, const struct claim_meta *,
	    struct policy_effects *, char **);
int	server_release(struct server *, const char *, struct policy_effects *,
	    char **);
/* What the API server says of a held claim's consumers now; containers
 * it lets in are pinned and their updates pushed. */
int	server_claim_consumers(struct server *, const char *,
	    const struct claim_meta *, char **);

/* Updates of containers that no reply carries go out over NRI. */
void	server_push_updates(struct server *, const struct policy_effects *);

void	server_set_error(struct server *, const char *, ...)
	    __attribute__((__format__(__printf__, 2, 3)));
json_t	*server_status(struct server *);
void	server_stop(struct server *);

#endif
