/*
 * topoaware-sim --replay: a node's history rebuilt offline from its state
 * folder. The oldest snapshot kept (state.json.prev when there is one,
 * else state.json) is restored under the config it was saved with; then
 * each journal record after it (journal.prev, then journal) has its event
 * (in the scenario form: create, update, sync, claim, reconfigure, ...)
 * replayed through the simulator, and the grants the record changed are
 * compared, as state-document JSON, with the same grants in the replayed
 * policy. The recorded state is followed alongside: a record without a
 * replayable event puts the replay back on it.
 */
#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "jrec.h"
#include "policy.h"
#include "readfile.h"
#include "sim.h"
#include "xmalloc.h"

/* As the daemon reads them (statefile.h, journal.c). */
#define SNAPSHOT_MAX	(512U << 20)
#define JOURNAL_MAX	(1024U << 20)
/* Differing grants named in full per record; the rest counted. */
#define DIFFS_SHOWN	5

struct replay {
	struct sim		 S;
	const struct topology	*topo;
	json_t			*rdoc;		/* the recorded state */
	unsigned long long	 seq;		/* the last record applied */
	const char		*explain;
	int			 records;
	int			 differ;
	int			 unreplayed;
	int			 failed;	/* output or a record unusable */
};

static int
emit(struct replay *r, json_t *o)
{
	int	rc;

	rc = json_dumpf(o, stdout, JSON_COMPACT);
	json_decref(o);
	if (rc != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
		fprintf(stderr, "topoaware-sim: cannot write: %s\n",
		    strerror(errno));
		r->failed = 1;
		return (-1);
	}
	return (0);
}

/* Reads dir/name; 0 with *buf NULL when it does not exist. */
static int
read_in(const char *dir, const char *name, size_t max, char **buf,
    size_t *len)
{
	char	*path, *cause = NULL;
	int	 rc = 0;

	*buf = NULL;
	*len = 0;
	xasprintf(&path, "%s/%s", dir, name);
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		free(path);
		return (0);
	}
	if (readfile(path, NULL, max, buf, len, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: %s\n", cause);
		free(cause);
		rc = -1;
	}
	free(path);
	return (rc);
}

/* The config a snapshot was saved under, else cfg as given. */
static int
snapshot_config(json_t *doc, const struct config *cfg, struct config **out)
{
	json_t	*c = json_object_get(doc, "config");
	char	*cause = NULL;

	if (c == NULL) {
		fprintf(stderr, "topoaware-sim: the snapshot holds no config: "
		    "replayed under the one given (--config, else the "
		    "defaults)\n");
		*out = config_dup(cfg);
		return (0);
	}
	if (config_from_json(c, out, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: the snapshot's config: %s\n",
		    cause);
		free(cause);
		return (-1);
	}
	return (0);
}

/* The replay's policy made again from the recorded state. */
static int
rebase(struct replay *r, char **cause)
{
	struct policy	*N = NULL;
	json_t		*copy = json_deep_copy(r->rdoc);
	int		 rc;

	rc = policy_restore(r->topo, policy_config(r->S.P), copy, &N, cause);
	json_decref(copy);
	if (rc != 0)
		return (rc);
	policy_free(r->S.P);
	r->S.P = N;
	return (0);
}

/* Adds key to diffs when the recorded and replayed grants differ. */
static void
compare_key(json_t *rec, json_t *rep, const char *key, json_t *diffs,
    int *n)
{
	json_t	*a = json_object_get(rec, key), *b = json_object_get(rep, key);

	if ((a == NULL && b == NULL) || (a != NULL && b != NULL &&
	    json_equal(a, b)))
		return;
	if (++*n > DIFFS_SHOWN)
		return;
	json_array_append_new(diffs, json_pack("{s:s, s:O?, s:O?}", "key",
	    key, "recorded", a, "replayed", b));
}

/* The grants a record changed, recorded and replayed; *n how many
 * differ. */
static json_t *
compare(struct replay *r, json_t *rec, int *n)
{
	json_t		*doc = policy_save(r->S.P), *diffs = json_array(), *v;
	json_t		*rg = json_object_get(r->rdoc, "grants");
	json_t		*pg = json_object_get(doc, "grants");
	const char	*key;
	size_t		 i;

	*n = 0;
	if (json_object_get(rec, "grants") != NULL) {
		json_object_foreach(rg, key, v)
			compare_key(rg, pg, key, diffs, n);
		json_object_foreach(pg, key, v)
			if (json_object_get(rg, key) == NULL)
				compare_key(rg, pg, key, diffs, n);
	} else {
		json_object_foreach(json_object_get(rec, "set"), key, v)
			compare_key(rg, pg, key, diffs, n);
		json_array_foreach(json_object_get(rec, "del"), i, v)
			if (json_is_string(v))
				compare_key(rg, pg, json_string_value(v),
				    diffs, n);
	}
	json_decref(doc);
	return (diffs);
}

/* Whether the record changed the grant key (of a container, or
 * "claim:<uid>" as the state document and explain name claims). */
static int
touches(json_t *rec, const char *key)
{
	json_t	*v;
	size_t	 i;

	if (json_object_get(rec, "grants") != NULL)
		return (json_object_get(json_object_get(rec, "grants"), key) !=
		    NULL);
	if (json_object_get(json_object_get(rec, "set"), key) != NULL)
		return (1);
	json_array_foreach(json_object_get(rec, "del"), i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return (1);
	return (0);
}

static void
explain_after(struct replay *r, unsigned long long seq, json_t *rec)
{
	json_t	*x;
	char	*cause = NULL;

	if (r->explain == NULL || !touches(rec, r->explain))
		return;
	if ((x = policy_explain(r->S.P, r->explain, &cause)) == NULL) {
		x = json_pack("{s:s}", "gone", cause);
		free(cause);
	}
	(void)emit(r, json_pack("{s:I, s:s, s:o}", "seq", (json_int_t)seq,
	    "explain", r->explain, "explanation", x));
}

/* One record: its event replayed, the recorded state followed, the two
 * compared. */
static int
one_record(uint64_t seq, const char *payload, size_t len, void *arg)
{
	struct replay	*r = arg;
	json_t		*rec, *ev, *reply = NULL, *line, *diffs;
	json_error_t	 err;
	char		*cause = NULL;
	int		 n;

	if (seq <= r->seq)
		return (0);
	r->seq = seq;
	r->records++;
	if ((rec = json_loadb(payload, len, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL || policy_record_apply(r->rdoc, rec, &cause) != 0) {
		fprintf(stderr, "topoaware-sim: record %llu: %s\n",
		    (unsigned long long)seq, rec == NULL ? err.text : cause);
		free(cause);
		json_decref(rec);
		r->failed = 1;
		return (1);
	}
	ev = json_object_get(rec, "event");
	line = json_pack("{s:I}", "seq", (json_int_t)seq);
	if (json_is_object(ev)) {
		json_object_set(line, "op", json_object_get(ev, "op"));
		reply = sim_answer(&r->S, ev);
	}
	if (reply == NULL || !json_is_true(json_object_get(reply, "ok"))) {
		/* Not replayable: go on from what was recorded. */
		r->unreplayed++;
		json_object_set_new(line, "replayed", json_false());
		json_object_set_new(line, "why", json_string(reply == NULL ?
		    "the record holds no event" : json_string_value(
		    json_object_get(reply, "error"))));
		if (rebase(r, &cause) != 0) {
			fprintf(stderr, "topoaware-sim: record %llu: the "
			    "recorded state cannot be restored: %s\n",
			    (unsigned long long)seq, cause);
			free(cause);
			json_decref(reply);
			json_decref(line);
			json_decref(rec);
			r->failed = 1;
			return (1);
		}
	} else {
		diffs = compare(r, rec, &n);
		json_object_set_new(line, "same", json_boolean(n == 0));
		if (n > 0) {
			r->differ++;
			json_object_set_new(line, "differs", diffs);
			if (n > DIFFS_SHOWN)
				json_object_set_new(line, "more",
				    json_integer(n - DIFFS_SHOWN));
			/* Go on from what the node did. */
			if (rebase(r, &cause) != 0) {
				fprintf(stderr, "topoaware-sim: record %llu: "
				    "%s\n", (unsigned long long)seq, cause);
				free(cause);
				r->failed = 1;
			}
		} else
			json_decref(diffs);
	}
	json_decref(reply);
	(void)emit(r, line);
	explain_after(r, seq, rec);
	json_decref(rec);
	return (r->failed);
}

/* The records of one journal file after the replay's seq. */
static int
replay_journal(struct replay *r, const char *dir, const char *name)
{
	char	*buf = NULL, *cause = NULL;
	size_t	 len, good;
	int	 rc;

	if (read_in(dir, name, JOURNAL_MAX, &buf, &len) != 0)
		return (-1);
	if (buf == NULL)
		return (0);
	rc = jrec_scan(buf, len, one_record, r, &good, &cause);
	if (rc == JREC_TORN || rc == JREC_DAMAGED)
		fprintf(stderr, "topoaware-sim: %s: %s: %s\n", name, cause,
		    rc == JREC_TORN ? "a record cut short by a crash, never "
		    "acknowledged: left out" : "the rest left out");
	free(cause);
	free(buf);
	return (r->failed ? -1 : 0);
}

int
sim_replay(const struct topology *t, const struct config *cfg,
    const char *dir, const char *explain)
{
	struct replay	 r;
	struct config	*scfg = NULL;
	json_error_t	 err;
	const char	*snap = "state.json.prev";
	char		*buf = NULL, *cause = NULL;
	size_t		 len;
	int		 older, rc = 1;

	memset(&r, 0, sizeof r);
	r.topo = t;
	r.S.topo = t;
	r.explain = explain;
	if (read_in(dir, snap, SNAPSHOT_MAX, &buf, &len) != 0)
		return (1);
	if ((older = buf != NULL) == 0) {
		snap = "state.json";
		if (read_in(dir, snap, SNAPSHOT_MAX, &buf, &len) != 0)
			return (1);
		if (buf == NULL) {
			fprintf(stderr, "topoaware-sim: %s: no state.json: not "
			    "a state folder\n", dir);
			return (1);
		}
	}
	if ((r.rdoc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err)) ==
	    NULL || !json_is_object(r.rdoc)) {
		fprintf(stderr, "topoaware-sim: %s/%s: %s\n", dir, snap,
		    r.rdoc == NULL ? err.text : "not a JSON object");
		goto out;
	}
	if (snapshot_config(r.rdoc, cfg, &scfg) != 0)
		goto out;
	r.seq = (unsigned long long)json_integer_value(json_object_get(r.rdoc,
	    "seq"));
	{
		json_t	*copy = json_deep_copy(r.rdoc);

		if (policy_restore(t, scfg, copy, &r.S.P, &cause) != 0) {
			fprintf(stderr, "topoaware-sim: %s/%s: %s\n", dir, snap,
			    cause);
			json_decref(copy);
			goto out;
		}
		json_decref(copy);
	}
	if ((older && replay_journal(&r, dir, "journal.prev") != 0) ||
	    replay_journal(&r, dir, "journal") != 0)
		goto out;
	if (emit(&r, json_pack("{s:s, s:i, s:i, s:i, s:I}", "from", snap,
	    "records", r.records, "differ", r.differ, "unreplayed",
	    r.unreplayed, "seq", (json_int_t)r.seq)) != 0)
		goto out;
	rc = r.differ > 0 ? 3 : 0;
out:
	free(buf);
	free(cause);
	config_free(scfg);
	policy_free(r.S.P);
	json_decref(r.rdoc);
	return (rc);
}
