/*
 * server.c owns the daemon's life: building the machine, config and policy
 * at start (the snapshot and the journal after it, saved claims first),
 * the signals, the watchdog timer, the one reload path, and the operations
 * every endpoint calls. Each runs the policy and goes through the one
 * commit: its change is made durable as one journal record before anyone
 * is answered, or undone and the error answered; then the updates no reply
 * carries are pushed, and the exported resources.sh files are written
 * after the answers, once per container per loop turn.
 */
#include "autoconf.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "admin.h"
#include "cdi.h"
#include "claimcheck.h"
#include "clustercfg.h"
#include "clock.h"
#include "event.h"
#include "exports.h"
#include "fleet.h"
#include "gate.h"
#include "http.h"
#include "journal.h"
#include "dra.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "nri.h"
#include "nrtdoc.h"
#include "nrt.h"
#include "readfile.h"
#include "sd.h"
#include "server.h"
#include "slice.h"
#include "spares.h"
#include "statefile.h"
#include "strmap.h"
#include "sysfs.h"
#include "watch.h"
#include "xmalloc.h"

static void	cold_arm(struct server *, long long);
static void	cold_cb(evutil_socket_t, short, void *);

static void	turn_cb(evutil_socket_t, short, void *);
static int	turn_end(struct server *, char **);
static void	after_answers(struct server *);
struct reload;
static int	reload_run(struct server *, const char *, struct reload *,
		    char **);

/*
 * Reads the config file once, without blocking (a FIFO in its place would
 * stop the loop): *text gets its bytes, or NULL when there is no file.
 * Whether an absent file is the defaults or a refusal is the caller's
 * rule: at start it is, at a reload it is not.
 */
static int
config_read(const char *path, char **text, size_t *len, char **cause)
{
	int	rc;

	rc = readfile(path, "config", SERVER_CONFIG_MAX, text, len, cause);
	if (rc == -ENOENT) {
		free(*cause);
		*cause = NULL;
		return (0);
	}
	return (rc);
}

/* The config of the bytes config_read gave; NULL text: the defaults. */
static int
config_load(const char *path, const char *text, size_t len,
    struct config **out, char **cause)
{
	char	*why = NULL;

	if (text == NULL) {
		*out = config_new();
		return (0);
	}
	if (config_parse(text, len, out, &why) != 0) {
		xasprintf(cause, "config %s: %s", path, why);
		free(why);
		return (-EINVAL);
	}
	return (0);
}

/*
 * The config bytes to start with, and what names them: the file's (no
 * text when it is absent: the defaults), or with the cluster source the
 * ones kept from the cluster (*kept: their object; no text: none kept).
 */
static int
start_text(const struct server_opts *o, char **text, size_t *len,
    json_t **kept, const char **what, char **cause)
{
	*kept = NULL;
	if (!o->config_cluster) {
		*what = o->config_path;
		return (config_read(o->config_path, text, len, cause));
	}
	*what = "kept from the cluster";
	return (clustercfg_kept_read(o->state_dir, text, len, kept, cause));
}

int
server_check_config(const struct server_opts *o, char **cause)
{
	struct topology	*t = NULL;
	struct config	*cfg = NULL;
	struct policy	*P = NULL;
	char		*text = NULL;
	size_t		 len = 0;
	int		 rc;
	json_t		*kept = NULL;
	const char	*what;

	if ((rc = sysfs_discover(o->sysfs_root, &t, cause)) == 0 &&
	    (rc = start_text(o, &text, &len, &kept, &what, cause)) == 0 &&
	    (rc = config_load(what, text, len, &cfg, cause)) == 0)
		rc = policy_new(t, cfg, &P, cause);
	json_decref(kept);
	policy_free(P);
	config_free(cfg);
	topology_free(t);
	free(text);
	return (rc);
}

/*
 * A new snapshot of everything held: the start of a new journal. On
 * failure the old snapshot and journal are still whole.
 */
static int
save_snapshot(struct server *srv, char **cause)
{
	size_t	 len;
	char	*text;
	int	 rc;

	text = policy_snapshot_text(srv->policy, journal_next(srv->journal) -
	    1, srv->cfg_text, &len);
	rc = journal_snapshot(srv->journal, text, len, cause);
	free(text);
	if (rc != 0)
		metrics_inc("errors", "kind", "state_write");
	return (rc);
}

/* How many conflicts claim_conflicts names before "and N more". */
#define SERVER_MAX_CONFLICTS	8

/* Appends "; "-separated findings to *out, up to SERVER_MAX_CONFLICTS. */
static void __attribute__((__format__(__printf__, 3, 4)))
conflict(char **out, int *n, const char *fmt, ...)
{
	va_list	 ap;
	char	*text, *joined;

	if ((*n)++ >= SERVER_MAX_CONFLICTS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		text = NULL;
	va_end(ap);
	if (text == NULL)
		return;
	if (*out == NULL) {
		*out = text;
		return;
	}
	xasprintf(&joined, "%s; %s", *out, text);
	free(*out);
	free(text);
	*out = joined;
}

/*
 * What keeps the saved claims of doc from their CPUs, in words an operator
 * can act on: two claims holding one CPU, CPUs the config reserves or
 * leaves out. NULL when none of that explains it.
 */
static char *
claim_conflicts(struct server *srv, json_t *doc)
{
	struct cpuset	  allowed = CPUSET_INITIALIZER;
	struct cpuset	  reserved = CPUSET_INITIALIZER;
	struct cpuset	  cpus = CPUSET_INITIALIZER, part = CPUSET_INITIALIZER;
	struct cpuset	  taken = CPUSET_INITIALIZER;
	const char	**owner, *key, *text, *first;
	json_t		 *grants, *g;
	char		 *out = NULL, *list, *more;
	int		  n = 0, cpu, config_ok;

	owner = xcalloc(CPUSET_SETSIZE, sizeof *owner);
	config_ok = config_resolve_cpus(srv->cfg, srv->topo, &allowed,
	    &reserved, NULL) == 0;
	grants = json_object_get(doc, "grants");
	json_object_foreach(grants, key, g) {
		if (strncmp(key, "claim:", 6) != 0 ||
		    (text = json_string_value(json_object_get(g, "cpus"))) ==
		    NULL || cpuset_parse(&cpus, text, NULL) != 0)
			continue;
		cpuset_zero(&taken);
		for (cpu = cpuset_first(&cpus); cpu >= 0;
		    cpu = cpuset_next(&cpus, cpu)) {
			if (owner[cpu] == NULL)
				owner[cpu] = key + 6;
			else
				cpuset_add(&taken, cpu);
		}
		/* One finding per earlier claim it shares CPUs with. */
		while ((cpu = cpuset_first(&taken)) >= 0) {
			first = owner[cpu];
			cpuset_zero(&part);
			for (; cpu >= 0; cpu = cpuset_next(&taken, cpu))
				if (owner[cpu] == first)
					cpuset_add(&part, cpu);
			cpuset_andnot(&taken, &part);
			list = cpuset_format(&part);
			conflict(&out, &n, "claims %s and %s both hold CPU%s "
			    "%s", first, key + 6, cpuset_count(&part) > 1 ?
			    "s" : "", list);
			free(list);
		}
		if (!config_ok)
			continue;
		cpuset_copy(&part, &cpus);
		cpuset_and(&part, &reserved);
		if (!cpuset_empty(&part)) {
			list = cpuset_format(&part);
			conflict(&out, &n, "claim %s holds CPU%s %s, which "
			    "reservedResources.cpu reserves", key + 6,
			    cpuset_count(&part) > 1 ? "s" : "", list);
			free(list);
		}
		cpuset_copy(&part, &cpus);
		cpuset_andnot(&part, &allowed);
		if (!cpuset_empty(&part)) {
			list = cpuset_format(&part);
			conflict(&out, &n, "claim %s holds CPU%s %s, which "
			    "availableResources.cpu leaves out or are offline",
			    key + 6, cpuset_count(&part) > 1 ? "s" : "", list);
			free(list);
		}
	}
	if (n > SERVER_MAX_CONFLICTS) {
		xasprintf(&more, "%s; and %d more", out,
		    n - SERVER_MAX_CONFLICTS);
		free(out);
		out = more;
	}
	free(owner);
	cpuset_clear(&allowed);
	cpuset_clear(&reserved);
	cpuset_clear(&cpus);
	cpuset_clear(&part);
	cpuset_clear(&taken);
	return (out);
}

/* Saved claims first, then the containers; a bad file is moved aside. */
static int
restore_state(struct server *srv, char **cause)
{
	struct journal_start	 st;
	json_t			*doc;
	char			*why = NULL, *where = NULL, *what;
	char			**warnings = NULL;
	int			 rc, i, nwarnings = 0;

	if ((rc = journal_load(srv->opts.state_dir, &st, cause)) != 0)
		return (rc);
	if (st.damaged) {
		/* A damaged journal may have lost a claim the kubelet still
		 * uses: its CDI spec must stay. */
		srv->journal_damaged = 1;
		log_warnx("THE STATE JOURNAL IS DAMAGED: %s. Claims prepared "
		    "after the damage may be missing; their CDI specs are "
		    "kept", st.damage);
		server_set_error(srv, "the state journal is damaged: %s",
		    st.damage);
		metrics_inc("errors", "kind", "state_read");
	}
	if (st.records > 0)
		log_info("replayed %d journal record%s after the snapshot",
		    st.records, st.records == 1 ? "" : "s");
	doc = st.doc;
	rc = policy_restore_warn(srv->topo, srv->cfg, doc, &srv->policy,
	    &warnings, &nwarnings, &why);
	for (i = 0; i < nwarnings; i++) {
		log_warnx("restoring the saved state: %s", warnings[i]);
		free(warnings[i]);
	}
	free(warnings);
	if (rc == 0) {
		log_info("restored %d containers and %d claims",
		    policy_ncontainers(srv->policy),
		    policy_nclaims(srv->policy));
		/* Restored whole: they were acknowledged. New ones wait. */
		if (policy_kept_bytes(srv->policy) > POLICY_META_BUDGET)
			log_warnx("the restored containers' metadata takes %zu "
			    "bytes of saved state, past the node's budget of "
			    "%d (POLICY_META_BUDGET): kept whole, and new "
			    "containers keep no labels, and are refused if "
			    "they have annotations of ours or %s* variables, "
			    "until there is room",
			    policy_kept_bytes(srv->policy), POLICY_META_BUDGET,
			    "DRA_CPUSET_");
		goto open;
	}
	if (rc == -EBUSY) {
		/*
		 * Starting would hand a claimed CPU out twice, and dropping
		 * a claim could take CPUs from a pod still running on them:
		 * only a person can decide, and restarting cannot help.
		 */
		what = claim_conflicts(srv, doc);
		/* The operator edits one file: the journal goes into it. */
		if (st.records > 0) {
			json_object_set_new(doc, "version",
			    json_integer(STATEFILE_VERSION));
			json_object_set_new(doc, "seq",
			    json_integer((json_int_t)st.seq));
			if (statefile_write(srv->opts.state_dir, doc,
			    &where) != 0) {
				log_warnx("%s", where);
				free(where);
				where = NULL;
			}
		}
		xasprintf(cause, "the saved claims cannot be reinstated: %s. "
		    "Claims are not dropped on their own, as pods may be "
		    "using their CPUs: either start with the config they were "
		    "made under, or remove from %s/%s the \"claim:<uid>\" "
		    "entries of claims no pod uses (kubectl get "
		    "resourceclaims -A), then start again",
		    what != NULL ? what : why, srv->opts.state_dir,
		    STATEFILE_NAME);
		free(what);
		free(why);
		journal_start_clear(&st);
		return (-ENOTRECOVERABLE);
	}
	if (statefile_move_aside(srv->opts.state_dir, &where, cause) != 0) {
		free(why);
		journal_start_clear(&st);
		return (-EIO);
	}
	log_warnx("saved state refused (%s), moved aside to %s", why, where);
	free(why);
	free(where);
	if ((rc = policy_new(srv->topo, srv->cfg, &srv->policy, cause)) != 0) {
		journal_start_clear(&st);
		return (rc);
	}
open:
	rc = journal_open(srv->opts.state_dir, st.seq, 0, &srv->journal,
	    cause);
	journal_start_clear(&st);
	return (rc);
}

/*
 * The config to start with: the file's, or with the cluster source the
 * one last applied from the cluster (kept in the state folder) until the
 * API answers. A kept config that cannot be read or parsed is set aside
 * loudly: the defaults serve until the API answers.
 */
static int
start_config(struct server *srv, char **cause)
{
	const char	*what;
	int		 rc;

	if ((rc = start_text(&srv->opts, &srv->cfg_text, &srv->cfg_textlen,
	    &srv->cluster_kept, &what, cause)) == 0 &&
	    (rc = config_load(what, srv->cfg_text, srv->cfg_textlen,
	    &srv->cfg, cause)) == 0)
		return (0);
	/* A bad file is the operator's to mend; a bad kept config is not
	 * a reason to stay down. */
	if (!srv->opts.config_cluster)
		return (rc);
	log_warnx("%s; starting with the built-in defaults until the API "
	    "server answers", *cause);
	free(*cause);
	*cause = NULL;
	free(srv->cfg_text);
	srv->cfg_text = NULL;
	srv->cfg_textlen = 0;
	json_decref(srv->cluster_kept);
	srv->cluster_kept = NULL;
	srv->cfg = config_new();
	return (0);
}

int
server_init(struct server *srv, const struct server_opts *o, char **cause)
{
	int	rc;

	memset(srv, 0, sizeof *srv);
	srv->opts = *o;
	srv->started = time(NULL);
	srv->cfg_since = srv->started;
	srv->generation = 1;
	srv->last_reload.ok = 1;
	srv->last_reload.generation = 1;
	srv->exports = exports_new(o->state_dir);
	if (o->cdi_dir != NULL)
		srv->cdi_spares = cdi_spares_new(o->cdi_dir);
	srv->gate = gate_new();

	/* An absent file is the defaults here, and only here. */
	if ((rc = sysfs_discover(o->sysfs_root, &srv->topo, cause)) != 0 ||
	    (rc = statefile_check_dir(o->state_dir, cause)) != 0 ||
	    (rc = start_config(srv, cause)) != 0 ||
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
		/* The operator asked for the cluster's config. */
		if (srv->opts.config_cluster) {
			xasprintf(cause, "--config-source cluster: %s",
			    srv->kube_error);
			return (-ENOTRECOVERABLE);
		}
		if (srv->cfg->dra_enabled || srv->cfg->nrt_enabled)
			log_warnx("%s; the DRA driver and the "
			    "NodeResourceTopology object are off",
			    srv->kube_error);
		return (0);
	}
	if (srv->opts.config_cluster)
		srv->cluster = clustercfg_new(srv, srv->kube,
		    srv->cluster_kept);
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
	srv->claimcheck = claimcheck_new(srv, srv->kube);
	claimcheck_unknown(srv->claimcheck);
	return (0);
}

int
server_start(struct server *srv, char **cause)
{
	struct timeval	 tv;
	uint64_t	 usec;
	char		*why = NULL;
	int		 rc;

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
	if (http_new(srv, srv->cfg, &srv->http, cause) != 0)
		return (-EIO);
	/* Without a watch the daemon still reloads on SIGHUP and `reload`;
	 * with the cluster source there is no file to watch. */
	if (!srv->opts.config_cluster && watch_new(srv,
	    srv->opts.watch_debounce_ms, &srv->watch, &why) != 0) {
		log_warnx("not watching the config file for changes: %s",
		    why);
		free(why);
	}
	if (nri_new(srv, &srv->nri, cause) != 0)
		return (-EIO);
	/* Without a way to the API server, starting again would fail the
	 * same way: main exits for a person to look. */
	if ((rc = start_kube(srv, cause)) != 0)
		return (rc == -ENOTRECOVERABLE ? rc : -EIO);
	/* A snapshot at start: a new generation, in this version's form. */
	if (save_snapshot(srv, cause) != 0)
		return (-EIO);
	srv->ev_turn = evtimer_new(srv->base, turn_cb, srv);
	if (srv->ev_turn == NULL) {
		xasprintf(cause, "cannot create the end-of-turn timer");
		return (-ENOMEM);
	}
	srv->ev_cold = evtimer_new(srv->base, cold_cb, srv);
	if (srv->ev_cold == NULL) {
		xasprintf(cause, "cannot create the cold start timer");
		return (-ENOMEM);
	}
	/* Cold starts restored from the state go on (or end at once). */
	cold_arm(srv, 0);
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
	char	*why = NULL;

	/* A turn still open ends first: a failed sync undoes it. */
	if (srv->journal != NULL && srv->gate != NULL && srv->policy != NULL)
		(void)turn_end(srv, NULL);
	/* Written out whole at the end: an older binary finds it all in
	 * state.json, and the next start has no journal to replay. */
	if (srv->journal != NULL && srv->policy != NULL &&
	    (journal_records(srv->journal) > 0 || srv->need_snapshot) &&
	    save_snapshot(srv, &why) != 0) {
		log_warnx("cannot write the state snapshot at exit: %s; the "
		    "journal keeps every change", why);
		free(why);
	}
	if (srv->exports != NULL && srv->policy != NULL)
		exports_flush(srv->exports, srv->policy);
	/* The API client's users cancel their requests before it goes. */
	claimcheck_free(srv->claimcheck);
	srv->claimcheck = NULL;
	clustercfg_free(srv->cluster);
	srv->cluster = NULL;
	json_decref(srv->cluster_kept);
	dra_free(srv->dra);
	slice_free(srv->slice);
	nrt_free(srv->nrt);
	kube_free(srv->kube);
	free(srv->kube_error);
	nri_free(srv->nri);
	watch_free(srv->watch);
	http_free(srv->http);
	admin_free(srv->admin);
	if (srv->ev_sigterm != NULL)
		event_free(srv->ev_sigterm);
	if (srv->ev_sigint != NULL)
		event_free(srv->ev_sigint);
	if (srv->ev_sighup != NULL)
		event_free(srv->ev_sighup);
	if (srv->ev_watchdog != NULL)
		event_free(srv->ev_watchdog);
	if (srv->ev_turn != NULL)
		event_free(srv->ev_turn);
	if (srv->ev_cold != NULL)
		event_free(srv->ev_cold);
	exports_free(srv->exports);
	spares_free(srv->cdi_spares);
	/* After every connection has left it. */
	gate_free(srv->gate);
	free(srv->turn);
	if (srv->base != NULL)
		event_base_free(srv->base);
	journal_free(srv->journal);
	policy_free(srv->policy);
	config_free(srv->cfg);
	topology_free(srv->topo);
	free(srv->last_reload.error);
	free(srv->last_error);
	free(srv->cfg_text);
	free(srv->cfg_refused);
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

/* The end of this loop turn is due (turn_end, on the next pass). */
static void
turn_schedule(struct server *srv)
{
	static const struct timeval	 now = { 0, 0 };

	if (!evtimer_pending(srv->ev_turn, NULL))
		evtimer_add(srv->ev_turn, &now);
}

static void
export_first(struct server *srv)
{
	if (srv->ev_turn == NULL)
		exports_flush(srv->exports, srv->policy); /* not serving yet */
	else
		turn_schedule(srv);
}

/* Queues id's resources.sh to be written (or removed) at the end of this
 * turn, after its changes are durable. */
static void
export_later(struct server *srv, const char *id, int remove)
{
	if (exports_later(srv->exports, id, remove))
		export_first(srv);
}

/* The same for a pool's file, which its shared containers link to. */
static void
export_pool_later(struct server *srv, const char *pool)
{
	if (exports_pool_later(srv->exports, pool))
		export_first(srv);
}

/*
 * A pod that names a claim it does not consume is told once, not on every
 * try: at most REFUSED_LOG_BURST lines a minute, then how many were not
 * logged.
 */
#define REFUSED_LOG_BURST	10

static void
log_refused(struct server *srv, const char *msg)
{
	time_t	now = time(NULL);

	metrics_inc("claim_pins_refused", NULL, NULL);
	if (now - srv->refused_log.window >= 60) {
		if (srv->refused_log.suppressed > 0)
			log_warnx("%d more containers were refused claims' "
			    "CPUs in the last minute", srv->refused_log.
			    suppressed);
		srv->refused_log.window = now;
		srv->refused_log.logged = 0;
		srv->refused_log.suppressed = 0;
	}
	if (srv->refused_log.logged++ < REFUSED_LOG_BURST)
		log_warnx("%s", msg);
	else
		srv->refused_log.suppressed++;
}

static void
log_effects(struct server *srv, const struct policy_effects *fx)
{
	int	i;

	for (i = 0; i < fx->nwarnings; i++)
		log_warnx("%s", fx->warnings[i]);
	for (i = 0; i < fx->nrefused; i++)
		log_refused(srv, fx->refused[i]);
	/* Perhaps the pod joined the claim after it was prepared. */
	for (i = 0; i < fx->nverify; i++)
		(void)claimcheck_read(srv->claimcheck, fx->verify[i], NULL,
		    NULL);
	if (fx->self.id != NULL)
		export_later(srv, fx->self.id, 0);
	/* A container whose file is its pool's needs only that file. */
	for (i = 0; i < fx->nupdates; i++)
		if (!fx->updates[i].pool_file)
			export_later(srv, fx->updates[i].id, 0);
	for (i = 0; i < fx->npools; i++)
		export_pool_later(srv, fx->pools[i]);
}

/* How commit treats a change that cannot be made durable. */
#define COMMIT_UNDO	0	/* undone, the error answered */
#define COMMIT_KEEP	1	/* kept in memory: the runtime did it */
#define COMMIT_NOW	2	/* undone; synced at once, not with the turn */

/*
 * The end of a loop turn: one fdatasync for every record the turn
 * appended (group commit), then the peers' output goes, then the
 * exports. If the sync fails, the turn's changes are undone in reverse
 * order, the connections holding answers to them are closed (their peers
 * ask again), and nothing more is acknowledged before a whole snapshot.
 */
static int
turn_end(struct server *srv, char **cause)
{
	struct policy_effects	*fx;
	char			*why = NULL;
	int			 i, dropped, rc;

	if ((rc = journal_sync(srv->journal, &why)) != 0) {
		server_set_error(srv, "cannot make the state durable: %s",
		    why);
		log_warnx("cannot make the state durable: %s; the %d "
		    "changes of this turn are undone", why, srv->turn_n);
		if (cause != NULL)
			*cause = why;
		else
			free(why);
		why = NULL;
		for (i = srv->turn_n - 1; i >= 0; i--)
			policy_undo(srv->policy, srv->turn[i]);
		srv->need_snapshot = 1;
		dropped = gate_drop(srv->gate);
		if (dropped > 0)
			log_warnx("%d connections closed: their answers told "
			    "of undone changes", dropped);
	} else
		gate_open(srv->gate);
	for (i = 0; i < srv->turn_n; i++) {
		fx = srv->turn[i];
		policy_effects_clear(fx);
		free(fx);
	}
	srv->turn_n = 0;
	after_answers(srv);
	return (rc);
}

/*
 * What a turn does once its answers are written (gate_open wrote them to
 * the sockets): the updates its events queued for the runtime, the
 * compaction of the journal (after the changes are safe; a failure only
 * waits), the resources.sh files (R-STATE-4), the CDI spares its claims
 * used, freed pages given back.
 */
static void
after_answers(struct server *srv)
{
	char	*why = NULL;

	nri_turn_done(srv->nri);
	if (!srv->need_snapshot && journal_wants_snapshot(srv->journal) &&
	    save_snapshot(srv, &why) != 0) {
		log_warnx("cannot compact the state journal: %s", why);
		free(why);
	}
	exports_flush(srv->exports, srv->policy);
	if (srv->dra != NULL)
		dra_turn_done(srv->dra);
	if (srv->trim) {
		srv->trim = 0;
		malloc_trim(0);
	}
}

static void
turn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*srv = arg;

	(void)turn_end(srv, NULL);
	/* What the turn kept or undid may start or end cold starts. */
	cold_arm(srv, 0);
}

/* A record of this turn is written: hold the output until it is durable,
 * and keep what undoes the change (none when it must be kept). */
static void
turn_add(struct server *srv, struct policy_effects *fx, int keep)
{
	struct policy_effects	*u;

	if (!keep) {
		u = xmalloc(sizeof *u);
		policy_effects_init(u);
		u->undo = fx->undo;
		fx->undo = NULL;
		if (srv->turn_n == srv->turn_cap) {
			srv->turn_cap = srv->turn_cap ? 2 * srv->turn_cap : 16;
			srv->turn = xreallocarray(srv->turn,
			    (size_t)srv->turn_cap, sizeof *srv->turn);
		}
		srv->turn[srv->turn_n++] = u;
	}
	gate_hold(srv->gate);
	if (srv->ev_turn == NULL)
		(void)turn_end(srv, NULL);	/* not serving yet: at once */
	else
		turn_schedule(srv);
}

/*
 * The one commit. The change of the operation whose effects are fx (the
 * last one made) is written as one journal record holding the event (JSON
 * text, consumed) and the grants it changed; the turn's group commit
 * makes it durable before anyone is told (output waits behind the gate).
 * If the record cannot be written the change is undone and the error
 * returned, unless COMMIT_KEEP: what the runtime cannot refuse (a
 * container gone) stays in memory and the next commit writes a whole
 * snapshot first. COMMIT_NOW syncs at once (a reload, whose undo must
 * happen before the server lets its old config go). Then the effects: the
 * log, the exports after this turn, the NRT object.
 */
static int
commit(struct server *srv, struct policy_effects *fx, const char *what,
    char *event, int how, char **cause)
{
	char	*why = NULL, *rec = NULL;
	size_t	 len;
	int	 rc = 0, keep = how == COMMIT_KEEP;

	if (!fx->save && !srv->need_snapshot)
		goto done;
	/* A change kept without its record: all of it, as a snapshot. */
	if (srv->need_snapshot && (rc = save_snapshot(srv, &why)) == 0) {
		srv->need_snapshot = 0;
		log_info("the state is saved again");
	}
	if (rc == 0 && fx->save) {
		/* The record is written in the event's buffer. */
		rec = policy_record_text(srv->policy, fx, event, &len);
		event = NULL;
		rc = journal_append_record(srv->journal, rec, len,
		    policy_effects_whole(fx), &why);
	}
	if (rc != 0) {
		xasprintf(cause, "%s: cannot save the state: %s", what, why);
		server_set_error(srv, "%s", *cause);
		free(why);
		if (keep) {
			/* Not an error to the caller: no cause to free. */
			srv->need_snapshot = 1;
			log_warnx("%s; kept in memory, saved with the next "
			    "change", *cause);
			free(*cause);
			*cause = NULL;
		} else
			policy_undo(srv->policy, fx);
		goto out;
	}
	if (fx->save) {
		turn_add(srv, fx, keep);
		/* A reload's turn ends here: a failed sync undoes the turn,
		 * this change too. */
		if (how == COMMIT_NOW && (rc = turn_end(srv, &why)) != 0) {
			xasprintf(cause, "%s: cannot save the state: %s", what,
			    why);
			free(why);
			goto out;
		}
	}
done:
	log_effects(srv, fx);
	if (srv->nrt != NULL && (fx->save || fx->nupdates > 0))
		nrt_changed(srv->nrt);
out:
	free(event);
	free(rec);
	return (keep ? 0 : rc);
}

#define COLD_RETRY_MS	5000	/* a cold start end not saved, again */

/*
 * The timer set to the next cold start's end, or off; retry (ms) when
 * the last end could not be saved, rather than at once again.
 */
static void
cold_arm(struct server *srv, long long retry)
{
	struct timeval	tv;
	long long	next, delay;

	if (srv->ev_cold == NULL)
		return;
	if ((next = policy_cold_next(srv->policy)) == 0) {
		evtimer_del(srv->ev_cold);
		return;
	}
	delay = next - clock_wall_ms();
	if (delay < retry)
		delay = retry;
	if (delay < 0)
		delay = 0;
	tv.tv_sec = (time_t)(delay / 1000);
	tv.tv_usec = (suseconds_t)(delay % 1000 * 1000);
	if (evtimer_add(srv->ev_cold, &tv) != 0)
		log_warnx("cannot arm the cold start timer");
}

/*
 * Cold starts whose time has come: DRAM is added to their memory, saved,
 * and the runtime told (it cannot refuse: the update is pushed). A
 * failed save undoes them; they are tried again a little later.
 */
static void
cold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server		*srv = arg;
	struct policy_effects	 fx;
	char			*cause = NULL;
	long long		 now = clock_wall_ms();
	int			 n;

	(void)fd;
	(void)what;
	policy_effects_init(&fx);
	if ((n = policy_cold_due(srv->policy, now, &fx)) > 0) {
		if (commit(srv, &fx, "cold start", event_cold(now),
		    COMMIT_UNDO, &cause) != 0) {
			log_warnx("%s; tried again in %d s", cause,
			    COLD_RETRY_MS / 1000);
			free(cause);
			policy_effects_clear(&fx);
			cold_arm(srv, COLD_RETRY_MS);
			return;
		}
		log_info("cold start over for %d container%s: DRAM added", n,
		    n > 1 ? "s" : "");
		while (n-- > 0)
			metrics_inc("cold_starts", NULL, NULL);
		server_push_updates(srv, &fx);
	}
	policy_effects_clear(&fx);
	cold_arm(srv, 0);
}

int
server_started(struct server *srv, const char *id, struct policy_effects *fx,
    char **cause)
{
	long long	at = clock_wall_ms();
	int		rc;

	if ((rc = policy_start(srv->policy, id, at, fx)) != 0)
		return (rc);
	if (!fx->save)
		return (0);
	/* The runtime started it whatever we say: kept if not saved. */
	rc = commit(srv, fx, "start", event_start(id, at), COMMIT_KEEP, cause);
	cold_arm(srv, 0);
	return (rc);
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
	int	rc;

	if ((rc = policy_create(srv->policy, s, fx, cause)) != 0) {
		refused(srv, "create", *cause);
		return (rc);
	}
	if ((rc = commit(srv, fx, "create", event_create(s), COMMIT_UNDO,
	    cause)) != 0)
		return (rc);
	metrics_inc("allocations", "kind", "container");
	return (0);
}

int
server_update(struct server *srv, const char *id, long long req,
    long long lim, long long mem, struct policy_effects *fx, char **cause)
{
	int	rc;

	if ((rc = policy_update(srv->policy, id, req, lim, mem, fx,
	    cause)) != 0) {
		refused(srv, "update", *cause);
		return (rc);
	}
	return (commit(srv, fx, "update", event_update(id, req, lim, mem),
	    COMMIT_UNDO, cause));
}

int
server_remove(struct server *srv, const char *id, struct policy_effects *fx,
    char **cause)
{
	int	rc;

	if ((rc = policy_remove(srv->policy, id, fx)) != 0)
		return (rc);
	if (!fx->save)
		return (0);
	/* The runtime removes it whatever we say: kept if not saved. */
	rc = commit(srv, fx, "remove", event_remove(id), COMMIT_KEEP, cause);
	export_later(srv, id, 1);
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
	if ((rc = commit(srv, fx, "sync", event_sync(specs, n, fx->read),
	    COMMIT_UNDO, cause)) != 0) {
		/* Nothing more is acknowledged before a whole snapshot. */
		srv->need_snapshot = 1;
		return (rc);
	}
	/* The old state a sync replaced, kept for an undo until the turn's
	 * group commit, and the runtime's message are freed at turn end:
	 * their pages go back then (some MiB with 1,000 containers). */
	srv->trim = 1;
	/* Containers that ended while we were away leave no file behind
	 * (the new ones are written when the turn's changes are durable). */
	if ((gone = exports_prune(srv->exports, known_container, srv,
	    &why)) < 0) {
		log_warnx("%s", why);
		metrics_inc("errors", "kind", "export");
		free(why);
	} else if (gone > 0)
		log_debug("removed resources.sh of %d containers gone", gone);
	return (0);
}

/*
 * A claim is prepared whole or not at all: its CPUs are taken in the
 * policy, its CDI spec written, then the change saved. If the spec cannot
 * be written or the change saved, the claim is undone (and a spec written
 * for a claim not held before removed): the kubelet, told the error,
 * prepares it again.
 */
int
server_claim(struct server *srv, const char *uid,
    const struct claim_result *res, int n, const struct claim_meta *meta,
    struct policy_effects *fx, char **cause)
{
	const char	*driver = srv->cfg->dra_driver_name;
	char		*why = NULL;
	int		 held, rc;

	held = policy_claim_cpus(srv->policy, uid) != NULL;
	if ((rc = policy_claim(srv->policy, uid, res, n, meta, fx,
	    cause)) != 0) {
		refused(srv, "claim", *cause);
		return (rc);
	}
	if ((rc = cdi_write(srv->cdi_spares, srv->opts.cdi_dir, driver, uid,
	    (const char *const *)fx->edits, (size_t)fx->nedits, !held,
	    &why)) != 0) {
		metrics_inc("errors", "kind", "cdi_write");
		xasprintf(cause, "cannot write the CDI spec: %s", why);
		free(why);
		server_set_error(srv, "claim %s: %s", uid, *cause);
		policy_undo(srv->policy, fx);
		return (rc);
	}
	if ((rc = commit(srv, fx, "claim", event_claim(uid, res, n, meta),
	    COMMIT_UNDO, cause)) != 0) {
		if (!held && cdi_remove(srv->cdi_spares, srv->opts.cdi_dir, driver, uid,
		    &why) != 0) {
			log_warnx("%s", why);
			free(why);
		}
		return (rc);
	}
	if (!held)
		metrics_inc("allocations", "kind", "claim");
	server_push_updates(srv, fx);
	return (0);
}

int
server_claim_consumers(struct server *srv, const char *uid,
    const struct claim_meta *meta, char **cause)
{
	struct policy_effects	 fx;
	int			 rc;

	policy_effects_init(&fx);
	if ((rc = policy_claim_consumers(srv->policy, uid, meta, &fx,
	    cause)) != 0) {
		policy_effects_clear(&fx);
		return (rc);
	}
	/* Undone when not saved: it is read again the next time. */
	if ((rc = commit(srv, &fx, "claim consumers", event_consumers(uid,
	    meta), COMMIT_UNDO, cause)) == 0)
		server_push_updates(srv, &fx);
	policy_effects_clear(&fx);
	return (rc);
}

int
server_release(struct server *srv, const char *uid, struct policy_effects *fx,
    char **cause)
{
	int	rc;

	/*
	 * A release the disk does not hold is neither acknowledged nor
	 * kept: the kubelet asks again, and a claim back after a restart
	 * with nobody to release it cannot happen.
	 */
	if ((rc = policy_release(srv->policy, uid, fx)) != 0)
		return (rc);
	if ((rc = commit(srv, fx, "release", event_release(uid), COMMIT_UNDO,
	    cause)) != 0)
		return (rc);
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
reload_done(struct server *srv, int ok, int unchanged, const char *error)
{
	free(srv->last_reload.error);
	srv->last_reload.error = error ? xstrdup(error) : NULL;
	srv->last_reload.ok = ok;
	srv->last_reload.unchanged = unchanged;
	srv->last_reload.generation = srv->generation;
	srv->last_reload.when = time(NULL);
}

/* The bytes refused for what they say; NULL when there are none. */
static void
reload_set_refused(struct server *srv, char *text, size_t len)
{
	free(srv->cfg_refused);
	srv->cfg_refused = text;
	srv->cfg_refusedlen = len;
}

/* Whether two config texts are the same; NULL is no file. */
static int
same_text(const char *a, size_t alen, const char *b, size_t blen)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (alen == blen && memcmp(a, b, alen) == 0);
}

static int
reload_refused(struct server *srv, const char *why, int rc, char *err,
    char **cause)
{
	log_warnx("reload (%s) refused, generation %u stays: %s", why,
	    srv->generation, err);
	metrics_inc("reloads", "result", "refused");
	server_set_error(srv, "reload (%s) refused: %s", why, err);
	reload_done(srv, 0, 0, err);
	*cause = err;
	sd_ready();
	return (rc);
}

/* A config on its way in by the reload's rule book (reload_begin). */
struct reload {
	const char		*path;		/* names the bytes in a cause */
	char			*source;	/* path's storage, when built */
	int			 given;		/* text is not the file's */
	char			*text;		/* the bytes; NULL: no file */
	size_t			 len;
	struct config		*cfg;
	struct policy_effects	 fx;		/* the policy's change */
	int			 rule;		/* RELOAD_* */
};

#define RELOAD_APPLIED	0	/* in the policy: fx to commit or undo */
#define RELOAD_SAME	1	/* the bytes in force: nothing to do */
#define RELOAD_AGAIN	2	/* the bytes last refused for what they say */
#define RELOAD_BAD	3	/* refused for its bytes alone */
#define RELOAD_REFUSED	4	/* refused now; it may do later */

static void
reload_init(struct reload *r, const char *path)
{
	memset(r, 0, sizeof *r);
	r->path = path;
	policy_effects_init(&r->fx);
}

/* The reload of text (len bytes, copied) instead of the file's, named
 * path in messages. */
static void
reload_give(struct reload *r, const char *path, const char *text,
    size_t len)
{
	r->path = path;
	r->given = 1;
	r->text = xmalloc(len + 1);
	memcpy(r->text, text, len);
	r->text[len] = '\0';
	r->len = len;
}

static void
reload_clear(struct reload *r)
{
	free(r->source);
	free(r->text);
	config_free(r->cfg);
	policy_effects_clear(&r->fx);
}

/*
 * The rule book up to the policy, one for the reload and its dry run: the
 * bytes (the file read once, unless given), the rules, the parse, the
 * HTTP address listened on beside the old one, and the policy's
 * reconfiguration, whose change waits in r->fx for the caller to commit
 * or undo (and the address to commit or abort). A file that is gone is
 * refused: absent means the defaults at start only. 0 with r->rule
 * APPLIED, SAME or AGAIN; else an error and why, BAD or REFUSED, and
 * nothing changed.
 */
static int
reload_begin(struct server *srv, struct reload *r, char **err)
{
	int	rc;

	r->rule = RELOAD_REFUSED;
	if (!r->given && (rc = config_read(r->path, &r->text, &r->len,
	    err)) != 0)
		return (rc);
	if (r->text == NULL && srv->cfg_text != NULL) {
		xasprintf(err, "config %s is gone; configuration generation "
		    "%u stays in force until it is back", r->path,
		    srv->generation);
		return (-ENOENT);
	}
	if (same_text(r->text, r->len, srv->cfg_text, srv->cfg_textlen)) {
		r->rule = RELOAD_SAME;
		return (0);
	}
	if (srv->cfg_refused != NULL && same_text(r->text, r->len,
	    srv->cfg_refused, srv->cfg_refusedlen)) {
		r->rule = RELOAD_AGAIN;
		return (0);
	}
	r->rule = RELOAD_BAD;
	if ((rc = config_load(r->path, r->text, r->len, &r->cfg, err)) != 0 ||
	    (rc = config_check_reload(srv->cfg, r->cfg, err)) != 0)
		return (rc);
	r->rule = RELOAD_REFUSED;
	/* A port taken now may be free later: no memory of it. */
	if ((rc = http_prepare(srv->http, r->cfg, err)) != 0)
		return (rc);
	/* Refused when it does not fit: it may do later, too. */
	if ((rc = policy_reconfigure(srv->policy, r->cfg, &r->fx, err)) != 0) {
		http_abort(srv->http);
		return (rc);
	}
	r->rule = RELOAD_APPLIED;
	return (0);
}

/* The config of r, applied and saved, is the one in force. */
static void
reload_swap(struct server *srv, struct reload *r)
{
	http_commit(srv->http, r->cfg);
	config_free(srv->cfg);
	srv->cfg = r->cfg;
	r->cfg = NULL;
	free(srv->cfg_text);
	srv->cfg_text = r->text;
	srv->cfg_textlen = r->len;
	r->text = NULL;
	srv->generation++;
	srv->cfg_since = time(NULL);
	if (srv->opts.verbosity == 0)
		log_set_level(srv->cfg->log_level);
}

/*
 * The one reload path, for SIGHUP, the file watch and `topoawarectl
 * reload` alike, and its rule book (reload_begin): bytes already in force
 * are not loaded again, nor bytes already refused for what they say; a
 * change that cannot be saved is undone; a refusal changes nothing and
 * says why. Every call ends with READY=1.
 */
int
server_reload(struct server *srv, const char *why, char **cause)
{
	struct reload	 r;

	/* The cluster source re-reads its object, then comes back below. */
	if (srv->cluster != NULL) {
		(void)clustercfg_reread(srv->cluster, why, NULL, NULL);
		return (0);
	}
	reload_init(&r, srv->opts.config_path);
	return (reload_run(srv, why, &r, cause));
}

int
server_reload_text(struct server *srv, const char *why, const char *source,
    const char *text, size_t len, char **cause)
{
	struct reload	 r;

	reload_init(&r, source);
	reload_give(&r, source, text, len);
	return (reload_run(srv, why, &r, cause));
}

/* The one reload path's end: rule, apply, commit or refuse; r is cleared. */
static int
reload_run(struct server *srv, const char *why, struct reload *rp,
    char **cause)
{
	struct reload	 r = *rp;
	char		*err = NULL;
	int		 rc;

	sd_reloading();
	rc = reload_begin(srv, &r, &err);
	switch (r.rule) {
	case RELOAD_SAME:
		reload_clear(&r);
		reload_set_refused(srv, NULL, 0);
		log_info("reload (%s): config %s unchanged, configuration "
		    "generation %u stays", why, r.path, srv->generation);
		metrics_inc("reloads", "result", "unchanged");
		reload_done(srv, 1, 1, NULL);
		sd_ready();
		return (0);
	case RELOAD_AGAIN:
		/* Another trigger for the same write: the same answer. */
		reload_clear(&r);
		log_debug("reload (%s): config %s already refused", why,
		    r.path);
		metrics_inc("reloads", "result", "unchanged");
		srv->last_reload.when = time(NULL);
		*cause = xstrdup(srv->last_reload.error != NULL ?
		    srv->last_reload.error : "refused");
		sd_ready();
		return (-EINVAL);
	case RELOAD_BAD:
		/* The same bytes will be refused too: remembered. */
		reload_set_refused(srv, r.text, r.len);
		r.text = NULL;
		reload_clear(&r);
		return (reload_refused(srv, why, rc, err, cause));
	case RELOAD_REFUSED:
		reload_clear(&r);
		reload_set_refused(srv, NULL, 0);
		return (reload_refused(srv, why, rc, err, cause));
	}
	reload_set_refused(srv, NULL, 0);
	/* Cannot be saved: undone by commit, and refused. */
	if ((rc = commit(srv, &r.fx, "reload", event_reconfigure(r.text,
	    r.len), COMMIT_NOW, &err)) != 0) {
		http_abort(srv->http);
		reload_clear(&r);
		return (reload_refused(srv, why, rc, err, cause));
	}
	reload_swap(srv, &r);
	reload_done(srv, 1, 0, NULL);
	server_push_updates(srv, &r.fx);
	publish_devices(srv);
	if (srv->nrt != NULL) {
		nrt_configure(srv->nrt, srv->cfg->nrt_enabled,
		    srv->cfg->nrt_refresh_seconds);
		nrt_changed(srv->nrt);
	}
	log_info("reloaded (%s): configuration generation %u, %d containers "
	    "moved", why, srv->generation, r.fx.nupdates);
	metrics_inc("reloads", "result", "ok");
	reload_clear(&r);
	sd_ready();
	return (0);
}

/* A string for a reply; bytes that are not UTF-8 become '?'. */
static json_t *
text_json(const char *text)
{
	json_t	*s;
	char	*copy, *p;

	if ((s = json_string(text)) != NULL)
		return (s);
	copy = xstrdup(text);
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	s = json_string(copy);
	free(copy);
	return (s != NULL ? s : json_null());
}

/* The warnings of fx, for a reply. */
static json_t *
warnings_json(const struct policy_effects *fx)
{
	json_t	*a = json_array();
	int	 i;

	for (i = 0; i < fx->nwarnings; i++)
		json_array_append_new(a, text_json(fx->warnings[i]));
	return (a);
}

/*
 * A dry run goes through the reload's rule book and the policy's
 * reconfiguration, then undoes it instead of the commit: nothing is
 * saved, sent, written or counted, no generation passes, and what it
 * reports is what the reload would do.
 */
json_t *
server_reload_dry(struct server *srv, const char *text, size_t len)
{
	struct reload	 r;
	json_t		*out, *moves = NULL;
	char		*err = NULL;

	reload_init(&r, srv->opts.config_path);
	if (text == NULL && srv->cluster != NULL) {
		/* The cluster source's object as the watch has it now. */
		r.path = "from the cluster";
		if (clustercfg_current(srv->cluster, &r.text, &r.len,
		    &r.source, &err) == 0) {
			r.path = r.source;
			r.given = 1;
		}
	} else if (text != NULL)
		reload_give(&r, "sent over the admin socket", text, len);
	/* Without an object there is nothing to try: refused as it is. */
	if (err != NULL)
		r.rule = RELOAD_REFUSED;
	else
		(void)reload_begin(srv, &r, &err);
	if (r.rule == RELOAD_AGAIN)
		err = xstrdup(srv->last_reload.error != NULL ?
		    srv->last_reload.error : "refused");
	if (r.rule == RELOAD_APPLIED) {
		moves = policy_moves(srv->policy, &r.fx);
		policy_undo(srv->policy, &r.fx);
		http_abort(srv->http);
	}
	if (moves == NULL)
		moves = json_pack("{s:[], s:[]}", "containers", "claims");
	out = json_pack("{s:b, s:i, s:b, s:o, s:o}", "dryRun", 1,
	    "generation", (int)srv->generation, "unchanged",
	    r.rule == RELOAD_SAME, "refused", err != NULL ? text_json(err) :
	    json_null(), "warnings", warnings_json(&r.fx));
	json_object_update(out, moves);
	if (err != NULL)
		log_info("reload dry run of config %s: would be refused: %s",
		    r.path, err);
	else
		log_info("reload dry run of config %s: %s, %zu containers and "
		    "%zu claims would move", r.path, r.rule == RELOAD_SAME ?
		    "unchanged" : "would apply", json_array_size(
		    json_object_get(moves, "containers")), json_array_size(
		    json_object_get(moves, "claims")));
	json_decref(moves);
	free(err);
	reload_clear(&r);
	return (out);
}

/* Where the config in force came from, and since when. */
static json_t *
config_source_status(struct server *srv)
{
	char	when[32];

	if (srv->cluster != NULL)
		return (clustercfg_status(srv->cluster));
	if (fleet_timestamp(srv->cfg_since, when, sizeof when) != 0)
		when[0] = '\0';
	return (json_pack("{s:s, s:s, s:b, s:s}", "source", "file", "path",
	    srv->opts.config_path, "defaults", srv->cfg_text == NULL,
	    "since", when));
}

json_t *
server_status(struct server *srv)
{
	json_t	*st, *lr, *nri, *dra;

	lr = json_pack("{s:b, s:b, s:o, s:i}", "ok", srv->last_reload.ok,
	    "unchanged", srv->last_reload.unchanged,
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
	json_object_set_new(st, "config", config_source_status(srv));
	if (srv->journal != NULL) {
		json_t	*j = journal_status(srv->journal);

		json_object_set_new(j, "damaged",
		    json_boolean(srv->journal_damaged));
		json_object_set_new(j, "unsaved",
		    json_boolean(srv->need_snapshot));
		json_object_set_new(st, "journal", j);
	}
	return (st);
}
