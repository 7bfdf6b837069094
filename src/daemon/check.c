/*
 * check.c owns the check jobs of `topoawarectl check` (check.h). The
 * policy's invariants are pure and quick: they are checked when the job
 * starts. Files are read one per loop turn from a zero timeout, so that
 * NRI and DRA requests are served between two reads however many claims
 * there are: each held claim's CDI spec, then state.json, journal.prev and
 * journal.
 *
 * The saved state is compared only if the journal did not change while
 * its files were read (journal_changes, which moves on every append, cut
 * and snapshot); otherwise the reads start again, at most
 * CHECK_MAX_RESTARTS times, after which the state is reported as not
 * compared rather than as a false violation. A change in memory always
 * goes through the journal (or sets need_snapshot, which is itself
 * reported), so an unchanged journal means an unchanged state. Records
 * not yet synced are in the file as their changes are in memory; a sync
 * that fails cuts them and undoes the changes, and moves the counter.
 */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "cdi.h"
#include "check.h"
#include "invariants.h"
#include "journal.h"
#include "jrec.h"
#include "log.h"
#include "policy.h"
#include "readfile.h"
#include "server.h"
#include "statefile.h"
#include "xmalloc.h"

/* Attempts at reading one state while it keeps changing. */
#define CHECK_MAX_RESTARTS	8
/* Differing grants named when the saved state is not the one in memory. */
#define CHECK_MAX_DIFFS		16

enum check_step {
	STEP_CDI = 0,
	STEP_CDI_LEFT,
	STEP_SNAPSHOT,
	STEP_JOURNAL_PREV,
	STEP_JOURNAL,
	STEP_COMPARE,
	STEP_DONE
};

struct check {
	struct server		*srv;
	struct event		*ev;
	check_done_cb		 done;
	void			*arg;
	struct violations	 vs;
	char			**uids;		/* claims held at the start */
	size_t			 nuids;
	size_t			 next;
	int			 specs;		/* CDI specs read */
	enum check_step		 step;
	struct journal_replay	 rp;		/* the saved state, rebuilt */
	uint64_t		 stamp;		/* journal_changes at the reads */
	int			 restarts;
	const char		*state;		/* what became of the state */
};

#ifdef TOPOAWARE_DEBUG_HOOKS
/*
 * TOPOAWARE_DEBUG_CHECK_STEP_MS=N spaces the steps N ms apart (at most
 * 10 s), so that a test can act while a check runs.
 */
static struct timeval
step_delay(void)
{
	struct timeval	 tv = { 0, 0 };
	const char	*v = getenv("TOPOAWARE_DEBUG_CHECK_STEP_MS");
	char		*end;
	long		 ms;

	if (v != NULL && (ms = strtol(v, &end, 10)) > 0 && ms <= 10000 &&
	    *end == '\0') {
		tv.tv_sec = ms / 1000;
		tv.tv_usec = (ms % 1000) * 1000;
	}
	return (tv);
}
#else
static struct timeval
step_delay(void)
{
	struct timeval	tv = { 0, 0 };

	return (tv);
}
#endif

/* The next step on a later pass of the loop, after its I/O is served. */
static void
arm(struct check *j)
{
	struct timeval	tv = step_delay();

	evtimer_add(j->ev, &tv);
}

static char *
claim_what(const char *uid)
{
	char	*s;

	xasprintf(&s, "claim %s", uid);
	return (s);
}

/* The first variable a spec on disk sets, or NULL (caller frees). */
static char *
spec_env(const char *buf, size_t len)
{
	json_t		*doc, *env;
	json_error_t	 err;
	char		*out = NULL;

	if ((doc = json_loadb(buf, len, 0, &err)) == NULL)
		return (NULL);
	env = json_array_get(json_object_get(json_object_get(json_array_get(
	    json_object_get(doc, "devices"), 0), "containerEdits"), "env"), 0);
	if (json_is_string(env))
		out = log_escape(json_string_value(env), 256);
	json_decref(doc);
	return (out);
}

/* One held claim's spec against the bytes cdi_write would write now. */
static void
check_spec(struct check *j, const char *uid)
{
	struct server	 *srv = j->srv;
	const char	 *driver = srv->cfg->dra_driver_name;
	char		**edits = NULL, *path, *buf = NULL, *why = NULL;
	char		 *want = NULL, *what, *has;
	size_t		  len;
	int		  k, i, rc;

	/* Released since the job began: nothing to hold a spec for. */
	if ((k = policy_claim_edits(srv->policy, uid, &edits)) < 0)
		return;
	path = cdi_path(srv->opts.cdi_dir, driver, uid);
	what = claim_what(uid);
	j->specs++;
	rc = readfile(path, "CDI spec", CDI_SPEC_MAX, &buf, &len, &why);
	if (rc == -ENOENT || rc == -ENOTDIR)
		violations_add(&j->vs, "cdi", what, "its CDI spec is missing");
	else if (rc != 0)
		violations_add(&j->vs, "cdi", what, "its CDI spec cannot be "
		    "read: %s", why);
	/* A claim saved by an older version (k 0): its spec is kept as is. */
	else if (k > 0 && (want = cdi_spec_text(driver, uid,
	    (const char *const *)edits, (size_t)k)) != NULL &&
	    (len != strlen(want) || memcmp(buf, want, len) != 0)) {
		has = spec_env(buf, len);
		if (has != NULL && strcmp(has, edits[0]) == 0)
			violations_add(&j->vs, "cdi", what, "its CDI spec is "
			    "not the one written for it (which sets %s)",
			    edits[0]);
		else
			violations_add(&j->vs, "cdi", what, "its CDI spec "
			    "differs from the claim: it sets %s, the claim "
			    "holds %s", has != NULL ? has : "nothing readable",
			    edits[0]);
		free(has);
	}
	for (i = 0; i < k; i++)
		free(edits[i]);
	free(edits);
	free(want);
	free(what);
	free(buf);
	free(why);
	free(path);
}

/*
 * The specs of claims not held, left by a release whose removal failed
 * (or kept at a start that found the journal damaged): the runtime would
 * still hand their CPUs to a container that names them.
 */
static void
check_left_specs(struct check *j)
{
	struct server	 *srv = j->srv;
	char		**uids = NULL, *why = NULL, *what, *path;
	size_t		  i, n = 0;

	if (!srv->cfg->dra_enabled)
		return;
	if (cdi_list(srv->opts.cdi_dir, srv->cfg->dra_driver_name, &uids, &n,
	    &why) != 0) {
		violations_add(&j->vs, "cdi", srv->opts.cdi_dir, "the CDI "
		    "folder cannot be read: %s", why);
		free(why);
		return;
	}
	for (i = 0; i < n; i++) {
		if (policy_claim_cpus(srv->policy, uids[i]) == NULL) {
			what = claim_what(uids[i]);
			path = cdi_path(srv->opts.cdi_dir,
			    srv->cfg->dra_driver_name, uids[i]);
			violations_add(&j->vs, "cdi", what, "a CDI spec is "
			    "left for it (%s) but it is not held: a container "
			    "naming it would get CPUs nobody holds", path);
			free(path);
			free(what);
		}
		free(uids[i]);
	}
	free(uids);
}

static void
state_violation(struct check *j, const char *what, const char *detail)
{
	violations_add(&j->vs, "state", what, "%s", detail);
	j->state = "differs";
	j->step = STEP_DONE;
}

/* The journal moved under the reads: start them again, or give up. */
static int
changed(struct check *j)
{
	if (journal_changes(j->srv->journal) == j->stamp)
		return (0);
	json_decref(j->rp.doc);
	j->rp.doc = NULL;
	if (++j->restarts > CHECK_MAX_RESTARTS) {
		j->state = "not compared: it changed during every attempt";
		j->step = STEP_DONE;
	} else {
		log_info("check: the saved state changed while it was read; "
		    "reading it again");
		j->step = STEP_SNAPSHOT;
	}
	return (1);
}

static char *
state_path(const struct check *j, const char *name)
{
	char	*p;

	xasprintf(&p, "%s/%s", j->srv->opts.state_dir, name);
	return (p);
}

static void
read_snapshot(struct check *j)
{
	struct server	*srv = j->srv;
	json_error_t	 err;
	json_t		*seq;
	char		*path, *buf = NULL, *why = NULL, *msg;
	size_t		 len;
	int		 rc;

	if (srv->need_snapshot) {
		state_violation(j, "saved state", "the last changes could not "
		    "be saved (see status); the next change writes a whole "
		    "snapshot");
		return;
	}
	j->stamp = journal_changes(srv->journal);
	path = state_path(j, STATEFILE_NAME);
	rc = readfile(path, "state", STATEFILE_MAX_SIZE, &buf, &len, &why);
	if (rc == -ENOENT) {
		j->rp.doc = json_pack("{s:i, s:{}}", "version", STATEFILE_VERSION,
		    "grants");
		j->rp.expect = 1;
	} else if (rc != 0)
		state_violation(j, STATEFILE_NAME, why);
	else if ((j->rp.doc = json_loadb(buf, len, 0, &err)) == NULL ||
	    !json_is_object(j->rp.doc)) {
		xasprintf(&msg, "not a JSON object: %s", j->rp.doc == NULL ?
		    err.text : "another value");
		state_violation(j, STATEFILE_NAME, msg);
		free(msg);
	} else {
		seq = json_object_get(j->rp.doc, "seq");
		j->rp.expect = (json_is_integer(seq) && json_integer_value(seq) >
		    0 ? (uint64_t)json_integer_value(seq) : 0) + 1;
	}
	if (j->step == STEP_SNAPSHOT)
		j->step = STEP_JOURNAL_PREV;
	free(buf);
	free(why);
	free(path);
}

static void
read_journal(struct check *j, const char *name)
{
	char	*path, *buf = NULL, *why = NULL, *msg = NULL;
	size_t	 len, good = 0;
	int	 rc;

	path = state_path(j, name);
	rc = readfile(path, "state journal", JOURNAL_MAX_SIZE, &buf, &len,
	    &why);
	if (rc != 0 && rc != -ENOENT)
		state_violation(j, name, why);
	else if (rc == 0 && (rc = jrec_scan(buf, len, journal_replay_record, &j->rp, &good,
	    &msg)) != JREC_END) {
		free(why);
		xasprintf(&why, "%s at byte %zu: %s", rc == JREC_TORN ?
		    "a record cut short" : "damaged", good, j->rp.error !=
		    NULL ? j->rp.error : msg != NULL ? msg : "?");
		free(msg);
		state_violation(j, name, why);
	}
	if (j->step != STEP_DONE)
		j->step++;
	free(j->rp.error);
	j->rp.error = NULL;
	free(buf);
	free(why);
	free(path);
}

static char *
key_what(const char *key)
{
	char	*s;

	if (strncmp(key, "claim:", 6) == 0)
		xasprintf(&s, "claim %s", key + 6);
	else
		xasprintf(&s, "container %s", key);
	return (s);
}

/* The fields of two grants that differ, "cpus, pool". */
static char *
fields_differ(json_t *a, json_t *b)
{
	const char	*k;
	json_t		*v;
	char		*out = NULL, *s;

	if (!json_is_object(a) || !json_is_object(b))
		return (xstrdup("its value"));
	json_object_foreach(a, k, v)
		if (!json_equal(v, json_object_get(b, k))) {
			xasprintf(&s, "%s%s%s", out ? out : "", out ? ", " : "",
			    k);
			free(out);
			out = s;
		}
	json_object_foreach(b, k, v)
		if (json_object_get(a, k) == NULL) {
			xasprintf(&s, "%s%s%s", out ? out : "", out ? ", " : "",
			    k);
			free(out);
			out = s;
		}
	return (out != NULL ? out : xstrdup("its value"));
}

/* Names the grants saved otherwise than held, by their keys. */
static void
name_diffs(struct check *j, const char *saved, const char *mem)
{
	json_t		*a, *b, *ga, *gb, *v;
	const char	*key;
	char		*what, *fields;
	int		 n = 0;

	a = json_loads(saved, 0, NULL);
	b = json_loads(mem, 0, NULL);
	ga = json_object_get(a, "grants");
	gb = json_object_get(b, "grants");
	json_object_foreach(gb, key, v) {
		if (json_equal(v, json_object_get(ga, key)) || n++ >=
		    CHECK_MAX_DIFFS)
			continue;
		what = key_what(key);
		if (json_object_get(ga, key) == NULL)
			violations_add(&j->vs, "state", what, "held in memory, "
			    "not in the saved state");
		else {
			fields = fields_differ(json_object_get(ga, key), v);
			violations_add(&j->vs, "state", what, "saved with "
			    "another %s than it has in memory", fields);
			free(fields);
		}
		free(what);
	}
	json_object_foreach(ga, key, v) {
		if (json_object_get(gb, key) != NULL || n++ >= CHECK_MAX_DIFFS)
			continue;
		what = key_what(key);
		violations_add(&j->vs, "state", what, "in the saved state, not "
		    "held in memory");
		free(what);
	}
	if (n == 0)
		violations_add(&j->vs, "state", "saved state", "differs from "
		    "the state in memory");
	else if (n > CHECK_MAX_DIFFS)
		violations_add(&j->vs, "state", "saved state", "%d more grants "
		    "differ", n - CHECK_MAX_DIFFS);
	json_decref(a);
	json_decref(b);
}

/* The saved state as a start would restore it, against memory. */
static void
compare_state(struct check *j)
{
	struct server	*srv = j->srv;
	struct policy	*R = NULL;
	char		*why = NULL, *msg, *saved, *mem;

	if (changed(j))
		return;
	if (policy_restore(srv->topo, srv->cfg, j->rp.doc, &R, &why) != 0) {
		xasprintf(&msg, "a start would not restore it: %s", why);
		state_violation(j, "saved state", msg);
		free(msg);
		free(why);
		return;
	}
	saved = policy_save_text(R, NULL);
	mem = policy_save_text(srv->policy, NULL);
	if (strcmp(saved, mem) == 0)
		j->state = "matches";
	else {
		name_diffs(j, saved, mem);
		j->state = "differs";
	}
	j->step = STEP_DONE;
	free(saved);
	free(mem);
	policy_free(R);
}

static json_t *
result(struct check *j)
{
	struct server	*srv = j->srv;
	int		 nc = policy_ncontainers(srv->policy);
	int		 nk = policy_nclaims(srv->policy);

	return (json_pack("{s:b, s:{s:i, s:i, s:i, s:i, s:s}, s:o}",
	    "ok", j->vs.n == 0 && j->vs.dropped == 0,
	    "checked", "containers", nc, "claims", nk, "grants", nc + nk,
	    "cdi_specs", j->specs, "state", j->state,
	    "violations", violations_json(&j->vs)));
}

static void
finish(struct check *j)
{
	char	*what;
	int	 i;

	for (i = 0; i < j->vs.n; i++) {
		what = log_escape(j->vs.v[i].what, 128);
		log_warnx("check: %s %s: %s", j->vs.v[i].kind, what,
		    j->vs.v[i].detail);
		free(what);
	}
	log_info("check: %d violation%s, state %s", j->vs.n + j->vs.dropped,
	    j->vs.n + j->vs.dropped == 1 ? "" : "s", j->state);
	j->done(result(j), j->arg);
}

static void
step_cb(evutil_socket_t fd, short what, void *arg)
{
	struct check	*j = arg;

	switch (j->step) {
	case STEP_CDI:
		if (j->next < j->nuids)
			check_spec(j, j->uids[j->next++]);
		if (j->next >= j->nuids)
			j->step = STEP_CDI_LEFT;
		break;
	case STEP_CDI_LEFT:
		check_left_specs(j);
		j->step = STEP_SNAPSHOT;
		break;
	case STEP_SNAPSHOT:
		read_snapshot(j);
		break;
	case STEP_JOURNAL_PREV:
		if (!changed(j))
			read_journal(j, JOURNAL_PREV);
		break;
	case STEP_JOURNAL:
		if (!changed(j))
			read_journal(j, JOURNAL_NAME);
		break;
	case STEP_COMPARE:
		compare_state(j);
		break;
	case STEP_DONE:
		break;
	}
	if (j->step == STEP_DONE)
		finish(j);
	else
		arm(j);
}

int
check_new(struct server *srv, check_done_cb done, void *arg,
    struct check **out, char **cause)
{
	struct check	 *j;
	const char	**uids;
	size_t		  i, n = 0;

	*out = NULL;
	j = xcalloc(1, sizeof *j);
	j->srv = srv;
	j->done = done;
	j->arg = arg;
	j->state = "not compared";
	violations_init(&j->vs);
	if ((j->ev = evtimer_new(srv->base, step_cb, j)) == NULL) {
		xasprintf(cause, "cannot create the check's event");
		check_free(j);
		return (-ENOMEM);
	}
	(void)invariants_check(srv->policy, &j->vs);
	/* Without DRA no spec is written: there is none to compare. */
	if (srv->dra != NULL) {
		uids = policy_claim_uids(srv->policy, &n);
		j->uids = xcalloc(n + 1, sizeof *j->uids);
		for (i = 0; i < n; i++)
			j->uids[i] = xstrdup(uids[i]);
		j->nuids = n;
		free(uids);
	}
	arm(j);
	*out = j;
	return (0);
}

void
check_free(struct check *j)
{
	size_t	i;

	if (j == NULL)
		return;
	if (j->ev != NULL)
		event_free(j->ev);
	for (i = 0; i < j->nuids; i++)
		free(j->uids[i]);
	free(j->uids);
	json_decref(j->rp.doc);
	free(j->rp.error);
	violations_clear(&j->vs);
	free(j);
}
