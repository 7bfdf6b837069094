/*
 * server.c owns the daemon's life: building the machine, config and policy
 * at start (saved claims first), the signals, the watchdog timer, the one
 * reload path, and the operations every endpoint calls: each runs the
 * policy, saves the state before anyone is answered, writes the exported
 * resources.sh files and pushes the updates no reply carries.
 */
#include "autoconf.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "admin.h"
#include "dra.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "nri.h"
#include "nrtdoc.h"
#include "nrt.h"
#include "sd.h"
#include "server.h"
#include "slice.h"
#include "statefile.h"
#include "sysfs.h"
#include "watch.h"
#include "xmalloc.h"

/* Reads the config file; an absent file means the embedded defaults. */
static int
load_config(const char *path, struct config **out, char **cause)
{
	json_t		*doc;
	json_error_t	 err;
	struct stat	 sb;
	char		*why = NULL;

	if (stat(path, &sb) != 0 && errno == ENOENT) {
		*out = config_new();
		return (0);
	}
	if ((doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL) {
		xasprintf(cause, "%s:%d:%d: %s", path, err.line, err.column,
		    err.text);
		return (-EINVAL);
	}
	if (config_from_json(doc, out, &why) != 0) {
		xasprintf(cause, "%s: %s", path, why);
		free(why);
		json_decref(doc);
		return (-EINVAL);
	}
	json_decref(doc);
	return (0);
}

int
server_check_config(const struct server_opts *o, char **cause)
{
	struct topology	*t = NULL;
	struct config	*cfg = NULL;
	struct policy	*P = NULL;
	int		 rc;

	if ((rc = sysfs_discover(o->sysfs_root, &t, cause)) == 0 &&
	    (rc = load_config(o->config_path, &cfg, cause)) == 0)
		rc = policy_new(t, cfg, &P, cause);
	policy_free(P);
	config_free(cfg);
	topology_free(t);
	return (rc);
}

static int
save_state(struct server *srv, char **cause)
{
	size_t	 len;
	char	*text = policy_save_text(srv->policy, &len);
	int	 rc;

	rc = statefile_write_text(srv->opts.state_dir, text, len, cause);
	free(text);
	if (rc != 0)
		metrics_inc("errors", "kind", "state_write");
	return (rc);
}

/* Saved claims first, then the containers; a bad file is moved aside. */
static int
restore_state(struct server *srv, char **cause)
{
	json_t	*doc = NULL;
	char	*why = NULL, *where = NULL;
	int	 rc;

	rc = statefile_read(srv->opts.state_dir, &doc, &why);
	if (rc != 0 && rc != -EBADMSG) {
		xasprintf(cause, "%s", why);
		free(why);
		return (rc);
	}
	if (rc == -EBADMSG) {
		log_warnx("%s; starting without saved grants", why);
		free(why);
		why = NULL;
	}
	if (doc == NULL)
		return (policy_new(srv->topo, srv->cfg, &srv->policy, cause));

	rc = policy_restore(srv->topo, srv->cfg, doc, &srv->policy, &why);
	json_decref(doc);
	if (rc == 0) {
		log_info("restored %d containers and %d claims",
		    policy_ncontainers(srv->policy),
		    policy_nclaims(srv->policy));
		return (0);
	}
	if (rc == -EBUSY) {
		/* Starting would hand a claimed CPU out twice. */
		xasprintf(cause, "the saved claims do not fit the config: %s; "
		    "fix the config, or move %s/%s away to drop them", why,
		    srv->opts.state_dir, STATEFILE_NAME);
		free(why);
		return (rc);
	}
	if (statefile_move_aside(srv->opts.state_dir, &where, cause) != 0) {
		free(why);
		return (-EIO);
	}
	log_warnx("saved state refused (%s), moved aside to %s", why, where);
	free(why);
	free(where);
	return (policy_new(srv->topo, srv->cfg, &srv->policy, cause));
}

int
server_init(struct server *srv, const struct server_opts *o, char **cause)
{
	int	rc;

	memset(srv, 0, sizeof *srv);
	srv->opts = *o;
	srv->started = time(NULL);
	srv->generation = 1;
	srv->last_reload.ok = 1;
	srv->last_reload.generation = 1;

	watch_snapshot(o->config_path, &srv->cfg_text, &srv->cfg_textlen);
	if ((rc = sysfs_discover(o->sysfs_root, &srv->topo, cause)) != 0 ||
	    (rc = load_config(o->config_path, &srv->cfg, cause)) != 0 ||
	    (rc = statefile_check_dir(o->state_dir, cause)) != 0 ||
	    (rc = restore_state(srv, cause)) != 0)
		return (rc);
	/* -v on the command line wins over log.level. */
	if (o->verbosity == 0)
		log_set_level(srv->cfg->log_level);
	return (0);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct server	*srv = arg;
	char		*cause = NULL;

	switch (sig) {
	case SIGHUP:
		if (server_reload(srv, "SIGHUP", &cause) != 0) {
			log_warnx("reload refused: %s", cause);
			free(cause);
		}
		break;
	default:
		log_info("stopping on signal %d", (int)sig);
		server_stop(srv);
		break;
	}
}

static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	sd_watchdog_ping();
}

static json_t *
nrt_content(void *arg)
{
	struct server	*srv = arg;

	return (nrtdoc_build(srv->policy));
}

static void
publish_devices(struct server *srv)
{
	struct dradev	*devs = NULL;
	int		 n;

	if (srv->slice == NULL)
		return;
	/* The policy's own list: slice_publish copies it. */
	n = policy_devices(srv->policy, &devs);
	slice_publish(srv->slice, devs, n);
}

/*
 * The API client and what needs it: the DRA driver with its slices, and
 * the NodeResourceTopology object. Without an API server the daemon
 * still pins containers; status says why DRA and NRT are off. A DRA
 * socket we cannot serve is fatal: the operator asked for it.
 */
static int
start_kube(struct server *srv, char **cause)
{
	struct kube_opts	 ko;
	char			*why = NULL;

	memset(&ko, 0, sizeof ko);
	ko.kubeconfig = srv->opts.kubeconfig;
	ko.timeout_ms = srv->opts.api_timeout_ms;
	ko.retries = srv->opts.api_retries;
	ko.backoff_ms = srv->opts.api_backoff_ms;
	if (kube_new(srv->base, &ko, &srv->kube, &why) != 0) {
		xasprintf(&srv->kube_error, "no Kubernetes API client: %s",
		    why);
		free(why);
		srv->kube = NULL;
		if (srv->cfg->dra_enabled || srv->cfg->nrt_enabled)
			log_warnx("%s; the DRA driver and the "
			    "NodeResourceTopology object are off",
			    srv->kube_error);
		return (0);
	}
	srv->nrt = nrt_new(srv->base, srv->kube, srv->opts.node_name,
	    srv->opts.nrt_debounce_ms, nrt_content, srv);
	nrt_configure(srv->nrt, srv->cfg->nrt_enabled,
	    srv->cfg->nrt_refresh_seconds);
	if (!srv->cfg->dra_enabled)
		return (0);
	srv->slice = slice_new(srv->base, srv->kube,
	    srv->cfg->dra_driver_name, srv->opts.node_name,
	    srv->opts.slice_resync_ms);
	publish_devices(srv);
	if (dra_new(srv, srv->kube, &srv->dra, cause) != 0)
		return (-EIO);
	return (0);
}

int
server_start(struct server *srv, char **cause)
{
	struct timeval	 tv;
	uint64_t	 usec;
	char		*why = NULL;

	signal(SIGPIPE, SIG_IGN);
	/* A file size limit fails the write (EFBIG), refused like a full
	 * disk, instead of killing the daemon. */
	signal(SIGXFSZ, SIG_IGN);
	if ((srv->base = event_base_new()) == NULL) {
		xasprintf(cause, "cannot create the event loop");
		return (-ENOMEM);
	}
	srv->ev_sigterm = evsignal_new(srv->base, SIGTERM, signal_cb, srv);
	srv->ev_sigint = evsignal_new(srv->base, SIGINT, signal_cb, srv);
	srv->ev_sighup = evsignal_new(srv->base, SIGHUP, signal_cb, srv);
	if (srv->ev_sigterm == NULL || srv->ev_sigint == NULL ||
	    srv->ev_sighup == NULL || evsignal_add(srv->ev_sigterm, NULL) ||
	    evsignal_add(srv->ev_sigint, NULL) ||
	    evsignal_add(srv->ev_sighup, NULL)) {
		xasprintf(cause, "cannot watch signals");
		return (-EIO);
	}
	/* Ping at half the interval systemd gave us. */
	if ((usec = sd_watchdog_usec()) > 0) {
		srv->ev_watchdog = event_new(srv->base, -1, EV_PERSIST,
		    watchdog_cb, srv);
		tv.tv_sec = (time_t)(usec / 2 / 1000000);
		tv.tv_usec = (suseconds_t)(usec / 2 % 1000000);
		if (srv->ev_watchdog == NULL ||
		    event_add(srv->ev_watchdog, &tv) != 0) {
			xasprintf(cause, "cannot arm the watchdog timer");
			return (-EIO);
		}
	}
	if (admin_new(srv, srv->opts.admin_socket, &srv->admin, cause) != 0)
		return (-EIO);
	/* Without a watch the daemon still reloads on SIGHUP and `reload`. */
	if (watch_new(srv, srv->opts.watch_debounce_ms, &srv->watch,
	    &why) != 0) {
		log_warnx("not watching the config file for changes: %s",
		    why);
		free(why);
	}
	if (nri_new(srv, &srv->nri, cause) != 0)
		return (-EIO);
	if (start_kube(srv, cause) != 0)
		return (-EIO);
	/* Saving once at start rewrites a state file another version left. */
	if (save_state(srv, cause) != 0)
		return (-EIO);
	log_info("topoawared %s started: %d CPUs online, %d containers and "
	    "%d claims held", PACKAGE_VERSION,
	    cpuset_count(topology_online(srv->topo)),
	    policy_ncontainers(srv->policy), policy_nclaims(srv->policy));
	sd_status("serving: %d containers, %d claims",
	    policy_ncontainers(srv->policy), policy_nclaims(srv->policy));
	sd_ready();
	return (0);
}

void
server_stop(struct server *srv)
{
	if (srv->stopping)
		return;
	srv->stopping = 1;
	sd_stopping();
	event_base_loopexit(srv->base, NULL);
}

void
server_clear(struct server *srv)
{
	/* The API client's users cancel their requests before it goes. */
	dra_free(srv->dra);
	slice_free(srv->slice);
	nrt_free(srv->nrt);
	kube_free(srv->kube);
	free(srv->kube_error);
	nri_free(srv->nri);
	watch_free(srv->watch);
	admin_free(srv->admin);
	if (srv->ev_sigterm != NULL)
		event_free(srv->ev_sigterm);
	if (srv->ev_sigint != NULL)
		event_free(srv->ev_sigint);
	if (srv->ev_sighup != NULL)
		event_free(srv->ev_sighup);
	if (srv->ev_watchdog != NULL)
		event_free(srv->ev_watchdog);
	if (srv->base != NULL)
		event_base_free(srv->base);
	policy_free(srv->policy);
	config_free(srv->cfg);
	topology_free(srv->topo);
	free(srv->last_reload.error);
	free(srv->last_error);
	free(srv->cfg_text);
	memset(srv, 0, sizeof *srv);
}

void
server_set_error(struct server *srv, const char *fmt, ...)
{
	va_list	 ap;
	char	*msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg == NULL)
		return;
	free(srv->last_error);
	srv->last_error = msg;
}

/* resources.sh of one container (R-STATE-4); failures are only logged. */
static void
export_one(struct server *srv, const char *id)
{
	struct policy_kv	*kv;
	struct statefile_var	 vars[8];
	char			*cause = NULL;
	int			 i, n;

	if (policy_export(srv->policy, id, &kv, &n) != 0)
		return;
	for (i = 0; i < n && i < 8; i++) {
		vars[i].name = kv[i].key;
		vars[i].value = kv[i].value;
	}
	if (statefile_write_resources(srv->opts.state_dir, id, vars,
	    (size_t)i, &cause) != 0) {
		log_warnx("%s", cause);
		metrics_inc("errors", "kind", "export");
		free(cause);
	}
	policy_export_free(kv, n);
}

static void
log_effects(struct server *srv, const struct policy_effects *fx)
{
	int	i;

	for (i = 0; i < fx->nwarnings; i++)
		log_warnx("%s", fx->warnings[i]);
	if (fx->self.id != NULL)
		export_one(srv, fx->self.id);
	for (i = 0; i < fx->nupdates; i++)
		export_one(srv, fx->updates[i].id);
}

/* Saves after a change; on failure the caller undoes what it can. */
static int
commit(struct server *srv, struct policy_effects *fx, const char *what,
    char **cause)
{
	char	*why = NULL;

	/* Changes not saved before are saved with this one, or retried. */
	if ((fx->save || srv->unsaved) && save_state(srv, &why) != 0) {
		srv->unsaved = 1;
		xasprintf(cause, "%s: cannot save the state: %s", what, why);
		server_set_error(srv, "%s", *cause);
		free(why);
		return (-EIO);
	}
	srv->unsaved = 0;
	log_effects(srv, fx);
	if (srv->nrt != NULL && (fx->save || fx->nupdates > 0))
		nrt_changed(srv->nrt);
	return (0);
}

static void
refused(struct server *srv, const char *what, const char *cause)
{
	metrics_inc("refusals", "op", what);
	server_set_error(srv, "%s: %s", what, cause);
}

int
server_create(struct server *srv, const struct container_spec *s,
    struct policy_effects *fx, char **cause)
{
	struct policy_effects	 undo;
	int			 rc;

	if ((rc = policy_create(srv->policy, s, fx, cause)) != 0) {
		refused(srv, "create", *cause);
		return (rc);
	}
	if ((rc = commit(srv, fx, "create", cause)) != 0) {
		policy_effects_init(&undo);
		policy_remove(srv->policy, s->id, &undo);
		policy_effects_clear(&undo);
		return (rc);
	}
	metrics_inc("allocations", "kind", "container");
	return (0);
}

int
server_update(struct server *srv, const char *id, long long req,
    long long lim, struct policy_effects *fx, char **cause)
{
	int	rc;

	if ((rc = policy_update(srv->policy, id, req, lim, fx, cause)) != 0) {
		refused(srv, "update", *cause);
		return (rc);
	}
	return (commit(srv, fx, "update", cause));
}

int
server_remove(struct server *srv, const char *id, struct policy_effects *fx,
    char **cause)
{
	char	*why = NULL;
	int	 rc;

	if ((rc = policy_remove(srv->policy, id, fx)) != 0)
		return (rc);
	if (statefile_remove_resources(srv->opts.state_dir, id, &why) != 0) {
		log_warnx("%s", why);
		free(why);
	}
	/* A release that is not saved frees CPUs here only: safe. */
	rc = commit(srv, fx, "remove", cause);
	metrics_inc("releases", "kind", "container");
	return (rc);
}

static int
known_container(const char *id, void *arg)
{
	struct server	*srv = arg;

	return (policy_pinning(srv->policy, id) != NULL);
}

int
server_sync(struct server *srv, const struct container_spec *specs, int n,
    struct policy_effects *fx, char **cause)
{
	char	*why = NULL;
	int	 rc, gone;

	if ((rc = policy_sync(srv->policy, specs, n, fx, cause)) != 0) {
		refused(srv, "sync", *cause);
		return (rc);
	}
	if ((rc = commit(srv, fx, "sync", cause)) != 0)
		return (rc);
	/* Containers that ended while we were away leave no file behind. */
	if ((gone = statefile_prune_resources(srv->opts.state_dir,
	    known_container, srv, &why)) < 0) {
		log_warnx("%s", why);
		metrics_inc("errors", "kind", "export");
		free(why);
	} else if (gone > 0)
		log_debug("removed resources.sh of %d containers gone", gone);
	return (0);
}

int
server_claim(struct server *srv, const char *uid,
    const struct claim_result *res, int n, struct policy_effects *fx,
    char **cause)
{
	struct policy_effects	 undo;
	int			 held, rc;

	held = policy_claim_cpus(srv->policy, uid) != NULL;
	if ((rc = policy_claim(srv->policy, uid, res, n, fx, cause)) != 0) {
		refused(srv, "claim", *cause);
		return (rc);
	}
	if ((rc = commit(srv, fx, "claim", cause)) != 0) {
		/* Not saved, so not acknowledged: let it go again. */
		if (!held) {
			policy_effects_init(&undo);
			policy_release(srv->policy, uid, &undo);
			policy_effects_clear(&undo);
		}
		return (rc);
	}
	if (!held)
		metrics_inc("allocations", "kind", "claim");
	server_push_updates(srv, fx);
	return (0);
}

int
server_release(struct server *srv, const char *uid, struct policy_effects *fx,
    char **cause)
{
	struct policy	*back = NULL;
	json_t		*snap = NULL;
	char		*why = NULL;
	int		 rc, unsaved = srv->unsaved;

	/*
	 * A release the disk does not hold must not be acknowledged nor
	 * kept: the kubelet would never ask again, and the claim would be
	 * back after a restart with nobody to release it. Undoing it means
	 * going back to the policy as it was; claims are rare enough that
	 * keeping a copy of the state for that is cheap.
	 */
	if (policy_claim_cpus(srv->policy, uid) != NULL)
		snap = policy_save(srv->policy);
	if ((rc = policy_release(srv->policy, uid, fx)) != 0) {
		json_decref(snap);
		return (rc);
	}
	if ((rc = commit(srv, fx, "release", cause)) != 0) {
		if (snap != NULL && policy_restore(srv->topo, srv->cfg, snap,
		    &back, &why) == 0) {
			policy_free(srv->policy);
			srv->policy = back;
			srv->unsaved = unsaved;
		} else if (snap != NULL) {
			log_warnx("claim %s: cannot undo the release: %s", uid,
			    why);
			free(why);
		}
		json_decref(snap);
		return (rc);
	}
	json_decref(snap);
	if (fx->save)
		metrics_inc("releases", "kind", "claim");
	server_push_updates(srv, fx);
	return (0);
}

void
server_push_updates(struct server *srv, const struct policy_effects *fx)
{
	if (fx->nupdates > 0 && srv->nri != NULL)
		nri_push_updates(srv->nri, fx->updates, fx->nupdates);
}

static void
reload_done(struct server *srv, int ok, const char *error)
{
	free(srv->last_reload.error);
	srv->last_reload.error = error ? xstrdup(error) : NULL;
	srv->last_reload.ok = ok;
	srv->last_reload.generation = srv->generation;
	srv->last_reload.when = time(NULL);
}

int
server_reload(struct server *srv, const char *why, char **cause)
{
	struct config		*cfg = NULL;
	struct policy_effects	 fx;
	char			*err = NULL;
	int			 rc;

	sd_reloading();
	policy_effects_init(&fx);
	/* Taken before the load: a write in between only costs a reload. */
	free(srv->cfg_text);
	watch_snapshot(srv->opts.config_path, &srv->cfg_text,
	    &srv->cfg_textlen);
	if ((rc = load_config(srv->opts.config_path, &cfg, &err)) != 0 ||
	    (rc = config_check_reload(srv->cfg, cfg, &err)) != 0 ||
	    (rc = policy_reconfigure(srv->policy, cfg, &fx, &err)) != 0) {
		log_warnx("reload (%s) refused, generation %u stays: %s", why,
		    srv->generation, err);
		metrics_inc("reloads", "result", "refused");
		server_set_error(srv, "reload (%s) refused: %s", why, err);
		reload_done(srv, 0, err);
		*cause = err;
		config_free(cfg);
		policy_effects_clear(&fx);
		sd_ready();
		return (rc);
	}
	config_free(srv->cfg);
	srv->cfg = cfg;
	srv->generation++;
	if (srv->opts.verbosity == 0)
		log_set_level(cfg->log_level);
	reload_done(srv, 1, NULL);
	if ((rc = commit(srv, &fx, "reload", &err)) != 0) {
		log_warnx("%s", err);
		free(err);
	}
	server_push_updates(srv, &fx);
	publish_devices(srv);
	if (srv->nrt != NULL) {
		nrt_configure(srv->nrt, cfg->nrt_enabled,
		    cfg->nrt_refresh_seconds);
		nrt_changed(srv->nrt);
	}
	log_info("reloaded (%s): configuration generation %u, %d containers "
	    "moved", why, srv->generation, fx.nupdates);
	metrics_inc("reloads", "result", "ok");
	policy_effects_clear(&fx);
	sd_ready();
	return (0);
}

json_t *
server_status(struct server *srv)
{
	json_t	*st, *lr, *nri, *dra;

	lr = json_pack("{s:b, s:o, s:i}", "ok", srv->last_reload.ok,
	    "error", srv->last_reload.error ?
	    json_string(srv->last_reload.error) : json_null(),
	    "generation", (int)srv->last_reload.generation);
	nri = srv->nri ? nri_status(srv->nri) :
	    json_pack("{s:b}", "connected", 0);
	if (srv->dra != NULL)
		dra = dra_status(srv->dra);
	else
		dra = json_pack("{s:b, s:s}", "registered", 0, "error",
		    !srv->cfg->dra_enabled ? "disabled (dra.enabled is false)" :
		    srv->kube_error != NULL ? srv->kube_error :
		    "not started");
	json_object_set_new(dra, "prepared", json_integer(
	    policy_nclaims(srv->policy)));
	if (srv->slice != NULL)
		json_object_set_new(dra, "slices", slice_status(srv->slice));
	if (srv->kube != NULL)
		json_object_set_new(dra, "api", kube_status(srv->kube));
	st = json_pack("{s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:i, s:i, s:o}",
	    "version", PACKAGE_VERSION,
	    "uptimeSeconds", (json_int_t)(time(NULL) - srv->started),
	    "configGeneration", (int)srv->generation,
	    "lastReload", lr, "nri", nri, "dra", dra,
	    "nrt", srv->nrt != NULL ? nrt_status(srv->nrt) :
	    json_pack("{s:b, s:s}", "enabled", 0, "lastError",
	    srv->kube_error != NULL ? srv->kube_error : "not started"),
	    "containers", policy_ncontainers(srv->policy),
	    "claims", policy_nclaims(srv->policy),
	    "lastError", srv->last_error ? json_string(srv->last_error) :
	    json_null());
	return (st);
}
