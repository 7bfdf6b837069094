/*
 * The cluster config source (clustercfg.h). Two watches feed it: the
 * TopologyAwarePolicy objects of the config namespace and this node's
 * Node (for its group label). Once both have listed, the scope rules
 * (fleet_choose) pick the object; its spec becomes config text
 * (fleet_spec_config, Go's keys we lack dropped with a warning) and goes
 * through the daemon's one reload path. The result goes to the object's
 * status, this node's entry only, and the config applied is kept in the
 * state folder for the next start. When no object applies, the config in
 * force stays: never the built-in defaults after start.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>

#include "atomicfile.h"
#include "clustercfg.h"
#include "fleet.h"
#include "kube.h"
#include "log.h"
#include "metrics.h"
#include "readfile.h"
#include "server.h"
#include "xmalloc.h"

/* A merge patch of this node's status entry on one object. */
struct cc_patch {
	struct clustercfg	*cc;
	char			*name;		/* the object */
	json_t			*doc;		/* waiting to go; NULL: none */
	json_t			*sent;		/* under way; NULL: none */
	struct kube_request	*req;
	struct event		*timer;		/* the next attempt */
	int			 backoff_ms;
	LIST_ENTRY(cc_patch)	 entry;
};

/* A re-read (SIGHUP, `topoawarectl reload`) waiting for the API. */
struct clustercfg_read {
	struct clustercfg		*cc;
	char				*why;
	clustercfg_done_cb		 done;
	void				*arg;
	struct kube_request		*req;
	LIST_ENTRY(clustercfg_read)	 entry;
};

/* The object last tried, that its generation is tried once. */
struct cc_tried {
	char		*name;
	char		*uid;
	json_int_t	 generation;
	char		*error;		/* NULL: it is in force */
};

/* The object whose config is in force. */
struct cc_current {
	char		*name;		/* NULL: none from the cluster */
	char		*uid;
	char		*rv;
	json_int_t	 generation;
	const char	*from;		/* "api", "kept" or "defaults" */
	char		**warnings;
	size_t		 nwarnings;
	time_t		 since;
};

struct clustercfg {
	struct server			*srv;
	struct kube			*kube;
	const char			*ns;
	const char			*node;
	const char			*label;
	char				*path;		/* the objects */
	struct kube_watch		*wobjs;
	struct kube_watch		*wnode;
	json_t				*objects;	/* name: object */
	int				 objs_listed;
	int				 node_listed;
	char				*group;
	const char			*group_deprecated;
	char				*group_invalid;	/* the bad value */
	struct cc_current		 cur;
	struct cc_tried			 tried;
	char				*patched;	/* holds our entry */
	int				 none_logged;
	char				*kept_error;
	json_int_t			 patches_sent;
	json_int_t			 patch_failures;
	char				*patch_error;
	LIST_HEAD(, cc_patch)		 patches;
	LIST_HEAD(, clustercfg_read)	 reads;
};

static void	cc_patch_send(struct cc_patch *);

/* RFC 3339, or the seconds when the year is out of its range. */
static char *
cc_time(time_t t, char *buf, size_t len)
{
	if (fleet_timestamp(t, buf, len) != 0)
		snprintf(buf, len, "%lld", (long long)t);
	return (buf);
}

static const char *
cc_str(const json_t *obj, const char *path1, const char *path2)
{
	const json_t	*v = json_object_get(obj, path1);

	if (path2 != NULL)
		v = json_object_get(v, path2);
	return (json_is_string(v) ? json_string_value(v) : NULL);
}

static json_int_t
cc_generation(const json_t *obj)
{
	const json_t	*v = json_object_get(json_object_get(obj, "metadata"),
			    "generation");

	return (json_is_integer(v) ? json_integer_value(v) : 0);
}

static void
cc_current_clear(struct cc_current *c)
{
	free(c->name);
	free(c->uid);
	free(c->rv);
	fleet_warnings_free(c->warnings, c->nwarnings);
	memset(c, 0, sizeof *c);
}

static void
cc_tried_set(struct cc_tried *t, const char *name, const char *uid,
    json_int_t generation, const char *error)
{
	free(t->name);
	free(t->uid);
	free(t->error);
	t->name = name != NULL ? xstrdup(name) : NULL;
	t->uid = uid != NULL ? xstrdup(uid) : NULL;
	t->generation = generation;
	t->error = error != NULL ? xstrdup(error) : NULL;
}

/* ---- The kept config ------------------------------------------------ */

int
clustercfg_kept_read(const char *state_dir, char **text, size_t *len,
    json_t **meta, char **cause)
{
	char	*path, *buf = NULL, *why = NULL;
	size_t	 n = 0;
	int	 rc;

	*text = NULL;
	*len = 0;
	*meta = NULL;
	xasprintf(&path, "%s/%s", state_dir, CLUSTERCFG_KEPT);
	rc = readfile(path, "kept cluster config", CLUSTERCFG_KEPT_MAX, &buf,
	    &n, cause);
	if (rc == -ENOENT) {
		free(*cause);
		*cause = NULL;
		rc = 0;
	} else if (rc == 0 && (rc = fleet_kept_parse(buf, n, text, len, meta,
	    &why)) != 0) {
		xasprintf(cause, "kept cluster config %s is damaged: %s", path,
		    why);
		free(why);
	}
	free(buf);
	free(path);
	return (rc);
}

/* The config in force came from cc->cur: kept for the next start. */
static void
cc_keep(struct clustercfg *cc)
{
	struct server	*srv = cc->srv;
	char		*data, *why = NULL;

	data = fleet_kept_doc(cc->ns, cc->cur.name, cc->cur.uid,
	    cc->cur.generation, cc->cur.rv, cc->cur.since,
	    srv->cfg_text != NULL ? srv->cfg_text : "{}",
	    srv->cfg_text != NULL ? srv->cfg_textlen : 2, cc->cur.warnings,
	    cc->cur.nwarnings);
	free(cc->kept_error);
	cc->kept_error = NULL;
	if (atomicfile_replace(srv->opts.state_dir, CLUSTERCFG_KEPT, data,
	    strlen(data), 0600, 1, &why) != 0) {
		cc->kept_error = why;
		log_warnx("cannot keep the config of TopologyAwarePolicy "
		    "%s/%s for the next start: %s; it is in force now",
		    cc->ns, cc->cur.name, cc->kept_error);
		metrics_inc("errors", "kind", "config_kept");
	}
	free(data);
}

/* ---- Status patches -------------------------------------------------- */

static struct cc_patch *
cc_patch_get(struct clustercfg *cc, const char *name)
{
	struct cc_patch	*p;

	LIST_FOREACH(p, &cc->patches, entry)
		if (strcmp(p->name, name) == 0)
			return (p);
	return (NULL);
}

static void
cc_patch_free(struct cc_patch *p)
{
	LIST_REMOVE(p, entry);
	kube_cancel(p->req);
	if (p->timer != NULL)
		event_free(p->timer);
	json_decref(p->doc);
	json_decref(p->sent);
	free(p->name);
	free(p);
}

static void
cc_patch_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	cc_patch_send(arg);
}

static void
cc_patch_cb(void *arg, int status, json_t *body, const char *error)
{
	struct cc_patch		*p = arg;
	struct clustercfg	*cc = p->cc;
	struct timeval		 tv;

	(void)body;
	p->req = NULL;
	if (status >= 200 && status < 300) {
		json_decref(p->sent);
		p->sent = NULL;
		p->backoff_ms = 0;
		free(cc->patch_error);
		cc->patch_error = NULL;
		if (p->doc == NULL)
			cc_patch_free(p);
		else
			cc_patch_send(p);	/* a newer one waits */
		return;
	}
	/* The object is gone: so is the entry to write or clear. */
	if (status == 404) {
		log_debug("TopologyAwarePolicy %s/%s is gone; its status "
		    "needs no entry of node %s", cc->ns, p->name, cc->node);
		cc_patch_free(p);
		return;
	}
	cc->patch_failures++;
	free(cc->patch_error);
	if (status != 0)
		xasprintf(&cc->patch_error, "%s/%s: HTTP %d: %s", cc->ns,
		    p->name, status, error != NULL ? error : "refused");
	else
		xasprintf(&cc->patch_error, "%s/%s: %s", cc->ns, p->name,
		    error != NULL ? error : "no answer");
	log_warnx("cannot write node %s's entry on the status of "
	    "TopologyAwarePolicy %s; trying again", cc->node,
	    cc->patch_error);
	metrics_inc("errors", "kind", "config_status");
	/* The doc that failed goes again, unless a newer one waits. */
	if (p->doc == NULL)
		p->doc = p->sent;
	else
		json_decref(p->sent);
	p->sent = NULL;
	p->backoff_ms = p->backoff_ms == 0 ? 1000 : p->backoff_ms * 2;
	if (p->backoff_ms > CLUSTERCFG_PATCH_BACKOFF_MAX_MS)
		p->backoff_ms = CLUSTERCFG_PATCH_BACKOFF_MAX_MS;
	tv.tv_sec = p->backoff_ms / 1000;
	tv.tv_usec = (p->backoff_ms % 1000) * 1000;
	if (p->timer == NULL)
		p->timer = evtimer_new(cc->srv->base, cc_patch_timer_cb, p);
	if (p->timer == NULL || evtimer_add(p->timer, &tv) != 0)
		log_warnx("cannot arm the status retry timer; the entry is "
		    "sent with the next change");
}

/* Sends the doc waiting, one request at a time per object so that they
 * cannot cross; a failed one goes again after a backoff. */
static void
cc_patch_send(struct cc_patch *p)
{
	struct clustercfg	*cc = p->cc;
	char			*path, *name;

	if (p->sent != NULL || p->doc == NULL)
		return;
	if (p->timer != NULL)
		evtimer_del(p->timer);
	name = kube_escape(p->name);
	xasprintf(&path, "%s/%s/status", cc->path, name);
	free(name);
	p->sent = p->doc;
	p->doc = NULL;
	cc->patches_sent++;
	/* The answer comes on the loop, an error too. */
	p->req = kube_request(cc->kube, "PATCH", path, p->sent, cc_patch_cb,
	    p);
	free(path);
}

/* Queues doc (stolen) for the status of object name. */
static void
cc_patch(struct clustercfg *cc, const char *name, json_t *doc)
{
	struct cc_patch	*p;

	if (doc == NULL)
		return;
	if ((p = cc_patch_get(cc, name)) == NULL) {
		p = xcalloc(1, sizeof *p);
		p->cc = cc;
		p->name = xstrdup(name);
		LIST_INSERT_HEAD(&cc->patches, p, entry);
	}
	json_decref(p->doc);
	p->doc = doc;
	p->backoff_ms = 0;
	cc_patch_send(p);
}

/* Our entry goes on name's status, off the object that held it before. */
static void
cc_report(struct clustercfg *cc, const char *name, json_int_t generation,
    const char *error, char *const *warnings, size_t nwarnings)
{
	if (cc->patched != NULL && strcmp(cc->patched, name) != 0)
		cc_patch(cc, cc->patched, fleet_status_clear(cc->node));
	free(cc->patched);
	cc->patched = xstrdup(name);
	cc_patch(cc, name, fleet_status_patch(cc->node, error == NULL,
	    generation, error, warnings, nwarnings, time(NULL)));
}

/* ---- Choosing and applying ------------------------------------------- */

/*
 * The object the scope rules choose among those known now: 0 with *name
 * (a key of cc->objects) and *obj, -EAGAIN before both watches have
 * listed, -ENOENT when none applies; *err says why.
 */
static int
cc_chosen(struct clustercfg *cc, const char **name, json_t **obj,
    char **err)
{
	const char	**names, *key;
	json_t		*v;
	size_t		 n = 0;

	if (!cc->objs_listed || !cc->node_listed) {
		xasprintf(err, "the TopologyAwarePolicy objects are not read "
		    "from the API server yet");
		return (-EAGAIN);
	}
	names = xcalloc(json_object_size(cc->objects) + 1, sizeof *names);
	json_object_foreach(cc->objects, key, v)
		names[n++] = key;
	*name = fleet_choose(cc->node, cc->group, names, n);
	free(names);
	if (*name == NULL) {
		xasprintf(err, "no TopologyAwarePolicy in namespace %s applies "
		    "to node %s (node.%s%s%s or default)", cc->ns, cc->node,
		    cc->node, cc->group != NULL ? ", group." : "",
		    cc->group != NULL ? cc->group : "");
		return (-ENOENT);
	}
	*obj = json_object_get(cc->objects, *name);
	return (0);
}

/* The objects are those of items (a list's), each under its name. */
static void
cc_set_objects(struct clustercfg *cc, const json_t *items)
{
	const char	*name;
	json_t		*item;
	size_t		 i;

	json_object_clear(cc->objects);
	json_array_foreach(items, i, item)
		if ((name = cc_str(item, "metadata", "name")) != NULL)
			json_object_set(cc->objects, name, item);
	cc->objs_listed = 1;
}

/* The config text of obj's spec (fleet_spec_config) and the name it goes
 * by in messages. */
static int
cc_spec_text(struct clustercfg *cc, const char *name, const json_t *obj,
    char **text, size_t *len, char ***warnings, size_t *nwarnings,
    char **source, char **cause)
{
	xasprintf(source, "TopologyAwarePolicy %s/%s generation %lld",
	    cc->ns, name, (long long)cc_generation(obj));
	return (fleet_spec_config(json_object_get(obj, "spec"), text, len,
	    warnings, nwarnings, cause));
}

/*
 * The scope rules over the objects known now, then the chosen object's
 * spec through the reload path. force: apply even the generation applied
 * already (a re-read). 0 when the chosen config is in force, 1 when there
 * was nothing to do, else an error and why.
 */
static int
cc_evaluate(struct clustercfg *cc, int force, const char *why, char **err)
{
	const char	*name = NULL, *uid, *rv;
	json_t		*obj = NULL;
	char		*text = NULL, *cause = NULL, *source, **warnings = NULL;
	size_t		 n, len = 0, nwarnings = 0;
	json_int_t	 generation;
	int		 rc;

	if ((rc = cc_chosen(cc, &name, &obj, &cause)) == -ENOENT) {
		xasprintf(err, "%s; configuration generation %u stays", cause,
		    cc->srv->generation);
		free(cause);
		if (!cc->none_logged)
			log_warnx("%s", *err);
		cc->none_logged = 1;
		cc_tried_set(&cc->tried, NULL, NULL, 0, NULL);
		/* Nothing of ours belongs on an object that no longer
		 * applies. */
		if (cc->patched != NULL) {
			cc_patch(cc, cc->patched,
			    fleet_status_clear(cc->node));
			free(cc->patched);
			cc->patched = NULL;
		}
		return (rc);
	}
	if (rc != 0) {
		*err = cause;
		return (rc);
	}
	cc->none_logged = 0;
	uid = cc_str(obj, "metadata", "uid");
	generation = cc_generation(obj);
	if (!force && cc->tried.name != NULL &&
	    strcmp(cc->tried.name, name) == 0 && cc->tried.uid != NULL &&
	    uid != NULL && strcmp(cc->tried.uid, uid) == 0 &&
	    cc->tried.generation == generation)
		return (1);

	if ((rc = cc_spec_text(cc, name, obj, &text, &len, &warnings,
	    &nwarnings, &source, &cause)) == 0) {
		for (n = 0; n < nwarnings; n++)
			log_warnx("%s: %s", source, warnings[n]);
		rc = server_reload_text(cc->srv, why, source, text, len,
		    &cause);
	} else
		log_warnx("%s refused: %s", source, cause);
	free(text);
	cc_tried_set(&cc->tried, name, uid, generation, rc == 0 ? NULL :
	    cause);
	cc_report(cc, name, generation, rc == 0 ? NULL : cause, warnings,
	    nwarnings);
	if (rc != 0) {
		/* The config in force stays, and so does what it came
		 * from. */
		fleet_warnings_free(warnings, nwarnings);
		*err = cause;
		free(source);
		return (rc);
	}
	cc_current_clear(&cc->cur);
	cc->cur.name = xstrdup(name);
	cc->cur.uid = uid != NULL ? xstrdup(uid) : NULL;
	rv = cc_str(obj, "metadata", "resourceVersion");
	cc->cur.rv = rv != NULL ? xstrdup(rv) : NULL;
	cc->cur.generation = generation;
	cc->cur.from = "api";
	cc->cur.warnings = warnings;
	cc->cur.nwarnings = nwarnings;
	cc->cur.since = time(NULL);
	cc_keep(cc);
	free(source);
	return (0);
}

static void
cc_changed(struct clustercfg *cc, const char *why)
{
	char	*err = NULL;

	(void)cc_evaluate(cc, 0, why, &err);
	free(err);
}

/* ---- The watches ----------------------------------------------------- */

static void
cc_objects_cb(void *arg, enum kube_watch_event ev, json_t *obj,
    const char *error)
{
	struct clustercfg	*cc = arg;
	const char		*name = cc_str(obj, "metadata", "name");

	switch (ev) {
	case KUBE_WATCH_LIST:
		cc_set_objects(cc, obj);
		break;
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		if (name == NULL)
			return;
		json_object_set(cc->objects, name, obj);
		break;
	case KUBE_WATCH_DELETED:
		if (name == NULL)
			return;
		json_object_del(cc->objects, name);
		break;
	case KUBE_WATCH_ERROR:
		log_debug("watch of TopologyAwarePolicies in %s: %s", cc->ns,
		    error);
		return;
	}
	cc_changed(cc, "cluster object change");
}

/* The node's group from its labels; 1 when it changed. */
static int
cc_set_group(struct clustercfg *cc, const json_t *node)
{
	const char	*g, *dep = NULL;
	int		 invalid = 0, changed;
	const json_t	*v;

	g = node != NULL ? fleet_group(node, cc->label, &dep, &invalid) :
	    NULL;
	free(cc->group_invalid);
	cc->group_invalid = NULL;
	if (invalid) {
		v = json_object_get(json_object_get(json_object_get(node,
		    "metadata"), "labels"), dep != NULL ? dep : cc->label);
		cc->group_invalid = xstrdup(json_is_string(v) ?
		    json_string_value(v) : "?");
		log_warnx("node %s: label %s=%s cannot name a "
		    "TopologyAwarePolicy group; the node is in no group",
		    cc->node, dep != NULL ? dep : cc->label,
		    cc->group_invalid);
	}
	if (dep != NULL && g != NULL && (cc->group_deprecated == NULL ||
	    strcmp(cc->group_deprecated, dep) != 0))
		log_warnx("node %s: using the deprecated group label %s; "
		    "label the node %s instead", cc->node, dep, cc->label);
	cc->group_deprecated = g != NULL ? dep : NULL;
	changed = (g == NULL) != (cc->group == NULL) ||
	    (g != NULL && strcmp(g, cc->group) != 0);
	if (changed) {
		log_info("node %s: configuration group %s", cc->node,
		    g != NULL ? g : "none");
		free(cc->group);
		cc->group = g != NULL ? xstrdup(g) : NULL;
	}
	return (changed);
}

static void
cc_node_cb(void *arg, enum kube_watch_event ev, json_t *obj,
    const char *error)
{
	struct clustercfg	*cc = arg;
	const json_t		*node = NULL, *item;
	const char		*name;
	size_t			 i;
	int			 first = !cc->node_listed;

	switch (ev) {
	case KUBE_WATCH_LIST:
		json_array_foreach(obj, i, item)
			if ((name = cc_str(item, "metadata", "name")) != NULL &&
			    strcmp(name, cc->node) == 0)
				node = item;
		if (node == NULL)
			log_warnx("no Node object %s: no configuration group "
			    "until it appears", cc->node);
		cc->node_listed = 1;
		break;
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		name = cc_str(obj, "metadata", "name");
		if (name == NULL || strcmp(name, cc->node) != 0)
			return;
		node = obj;
		break;
	case KUBE_WATCH_DELETED:
		name = cc_str(obj, "metadata", "name");
		if (name == NULL || strcmp(name, cc->node) != 0)
			return;
		break;
	case KUBE_WATCH_ERROR:
		log_debug("watch of Node %s: %s", cc->node, error);
		if (cc->node_listed)
			return;
		/* Not readable (RBAC, say): no group until it is, rather
		 * than no configuration at all. The watch keeps trying. */
		log_warnx("cannot read Node %s: %s; no configuration group "
		    "until it can be read", cc->node, error);
		cc->node_listed = 1;
		break;
	}
	if (cc_set_group(cc, node) || first)
		cc_changed(cc, "node group change");
}

/* ---- The re-read ------------------------------------------------------ */

static void
cc_read_free(struct clustercfg_read *rd)
{
	LIST_REMOVE(rd, entry);
	kube_cancel(rd->req);
	free(rd->why);
	free(rd);
}

static void
cc_read_cb(void *arg, int status, json_t *body, const char *error)
{
	struct clustercfg_read	*rd = arg;
	struct clustercfg	*cc = rd->cc;
	struct server		*srv = cc->srv;
	json_t			*items, *reply = NULL;
	char			*err = NULL, *what;
	int			 rc;

	rd->req = NULL;
	items = json_object_get(body, "items");
	if (status != 200 || !json_is_array(items)) {
		if (status == 0)
			xasprintf(&what, "%s", error != NULL ? error :
			    "no answer");
		else
			xasprintf(&what, "HTTP %d: %s", status, status ==
			    200 ? "no items" : error != NULL ? error :
			    "error");
		xasprintf(&err, "cannot read the TopologyAwarePolicy objects "
		    "of namespace %s from the API server: %s; configuration "
		    "generation %u stays", cc->ns, what, srv->generation);
		free(what);
		log_warnx("reload (%s): %s", rd->why, err);
	} else {
		/* What the API server says now is the truth; the watch
		 * carries on from its own place. */
		cc_set_objects(cc, items);
		rc = cc_evaluate(cc, 1, rd->why, &err);
		if (rc == 0)
			reply = json_pack("{s:i, s:b, s:s, s:s, s:I}",
			    "generation", (int)srv->generation, "unchanged",
			    srv->last_reload.unchanged, "source", "cluster",
			    "object", cc->cur.name, "objectGeneration",
			    cc->cur.generation);
	}
	if (rd->done != NULL)
		rd->done(rd->arg, reply, err);
	json_decref(reply);
	free(err);
	cc_read_free(rd);
}

struct clustercfg_read *
clustercfg_reread(struct clustercfg *cc, const char *why,
    clustercfg_done_cb done, void *arg)
{
	struct clustercfg_read	*rd;

	rd = xcalloc(1, sizeof *rd);
	rd->cc = cc;
	rd->why = xstrdup(why);
	rd->done = done;
	rd->arg = arg;
	LIST_INSERT_HEAD(&cc->reads, rd, entry);
	log_info("reload (%s): reading the TopologyAwarePolicy objects of "
	    "namespace %s again", why, cc->ns);
	/* The callback comes later, on the loop, even on failure. */
	rd->req = kube_request(cc->kube, "GET", cc->path, NULL, cc_read_cb,
	    rd);
	return (rd);
}

void
clustercfg_read_cancel(struct clustercfg_read *rd)
{
	if (rd != NULL)
		cc_read_free(rd);
}

int
clustercfg_current(struct clustercfg *cc, char **text, size_t *len,
    char **source, char **cause)
{
	const char	*name = NULL;
	json_t		*obj = NULL;
	char		**warnings = NULL;
	size_t		 nwarnings = 0;
	int		 rc;

	if ((rc = cc_chosen(cc, &name, &obj, cause)) != 0)
		return (rc);
	if ((rc = cc_spec_text(cc, name, obj, text, len, &warnings,
	    &nwarnings, source, cause)) != 0) {
		free(*source);
		*source = NULL;
		return (rc);
	}
	fleet_warnings_free(warnings, nwarnings);
	return (0);
}

/* ---- Life ------------------------------------------------------------- */

struct clustercfg *
clustercfg_new(struct server *srv, struct kube *kube, json_t *kept)
{
	struct clustercfg	*cc;
	char			*ns, *node, *query;
	const json_t		*v;

	cc = xcalloc(1, sizeof *cc);
	cc->srv = srv;
	cc->kube = kube;
	cc->ns = srv->opts.config_namespace;
	cc->node = srv->opts.node_name;
	cc->label = srv->opts.config_group_label;
	cc->objects = json_object();
	LIST_INIT(&cc->patches);
	LIST_INIT(&cc->reads);
	cc->cur.from = "defaults";
	cc->cur.since = srv->started;
	if (kept != NULL) {
		cc->cur.from = "kept";
		cc->cur.name = xstrdup(cc_str(kept, "name", NULL));
		if (cc_str(kept, "uid", NULL) != NULL)
			cc->cur.uid = xstrdup(cc_str(kept, "uid", NULL));
		if ((v = json_object_get(kept, "generation")) != NULL &&
		    json_is_integer(v))
			cc->cur.generation = json_integer_value(v);
		log_info("configuration kept from TopologyAwarePolicy %s/%s "
		    "generation %lld until the API server answers",
		    cc_str(kept, "namespace", NULL) != NULL ?
		    cc_str(kept, "namespace", NULL) : "?", cc->cur.name,
		    (long long)cc->cur.generation);
		/* Its entry is ours to clear if another object applies. */
		cc->patched = xstrdup(cc->cur.name);
	}
	ns = kube_escape(cc->ns);
	xasprintf(&cc->path, "/apis/config.nri/v1alpha1/namespaces/%s/"
	    "topologyawarepolicies", ns);
	free(ns);
	node = kube_escape(cc->node);
	xasprintf(&query, "fieldSelector=metadata.name%%3D%s", node);
	free(node);
	cc->wobjs = kube_watch_new(kube, cc->path, NULL, cc_objects_cb, cc);
	cc->wnode = kube_watch_new(kube, "/api/v1/nodes", query, cc_node_cb,
	    cc);
	free(query);
	return (cc);
}

void
clustercfg_free(struct clustercfg *cc)
{
	if (cc == NULL)
		return;
	kube_watch_free(cc->wobjs);
	kube_watch_free(cc->wnode);
	while (!LIST_EMPTY(&cc->reads)) {
		struct clustercfg_read	*rd = LIST_FIRST(&cc->reads);

		if (rd->done != NULL)
			rd->done(rd->arg, NULL, "the daemon is stopping");
		cc_read_free(rd);
	}
	while (!LIST_EMPTY(&cc->patches))
		cc_patch_free(LIST_FIRST(&cc->patches));
	json_decref(cc->objects);
	cc_current_clear(&cc->cur);
	cc_tried_set(&cc->tried, NULL, NULL, 0, NULL);
	free(cc->path);
	free(cc->group);
	free(cc->group_invalid);
	free(cc->patched);
	free(cc->kept_error);
	free(cc->patch_error);
	free(cc);
}

json_t *
clustercfg_status(const struct clustercfg *cc)
{
	json_t			*st, *w;
	const struct cc_patch	*p;
	char			 when[32];
	size_t			 i;
	int			 pending = 0;

	w = json_array();
	for (i = 0; i < cc->cur.nwarnings; i++)
		json_array_append_new(w, json_string(cc->cur.warnings[i]));
	LIST_FOREACH(p, &cc->patches, entry)
		pending++;
	st = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:I, s:s, "
	    "s:s, s:o, s:s?, s:s?}",
	    "source", "cluster", "namespace", cc->ns, "node", cc->node,
	    "groupLabel", cc->label, "group", cc->group,
	    "object", cc->cur.name, "uid", cc->cur.uid,
	    "generation", cc->cur.generation,
	    "from", cc->cur.from, "since", cc_time(cc->cur.since, when,
	    sizeof when), "warnings", w, "keptError", cc->kept_error,
	    "invalidGroup", cc->group_invalid);
	json_object_set_new(st, "noObject", json_boolean(cc->none_logged));
	/* The last object tried when it was refused: what status shows. */
	json_object_set_new(st, "refused", cc->tried.error == NULL ?
	    json_null() : json_pack("{s:s, s:I, s:s}", "object",
	    cc->tried.name, "generation", cc->tried.generation, "error",
	    cc->tried.error));
	json_object_set_new(st, "statusPatches", json_pack("{s:i, s:I, s:I, "
	    "s:s?}", "pending", pending, "sent", cc->patches_sent, "failed",
	    cc->patch_failures, "lastError", cc->patch_error));
	json_object_set_new(st, "watches", json_pack("{s:o, s:o}", "objects",
	    cc->wobjs != NULL ? kube_watch_status(cc->wobjs) : json_null(),
	    "node", cc->wnode != NULL ? kube_watch_status(cc->wnode) :
	    json_null()));
	return (st);
}
