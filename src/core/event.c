/*
 * event.c writes the events that reach the policy as JSON text in the
 * form topoaware-sim reads its scenarios (topoaware-sim(1)): what the
 * journal keeps of each change besides the grants it changed, so that a
 * node's history can be replayed offline. A container is written as the
 * policy keeps it: our annotations and DRA_CPUSET_ variables only, and the
 * pod's and the container's labels, within their caps (and, for a
 * Synchronize, within the node's budget of kept metadata).
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "event.h"
#include "policy_priv.h"
#include "textbuf.h"
#include "utf8.h"
#include "xmalloc.h"

static const char *qos_names[] = { "BestEffort", "Burstable", "Guaranteed" };

static char *
text_of(json_t *o)
{
	char	*s;

	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (s == NULL)
		return (xstrdup("null"));
	return (s);
}

static void
set_string(json_t *o, const char *k, const char *v)
{
	json_t	*s;

	if (v == NULL)
		return;
	/* What is kept was cleaned to UTF-8 already; a peer's raw id may
	 * not have been, and is then left out rather than lost whole. */
	if ((s = json_string(v)) != NULL)
		json_object_set_new(o, k, s);
}

static void
set_milli(json_t *o, const char *k, long long v)
{
	char	buf[32];

	if (v < 0)
		return;
	snprintf(buf, sizeof buf, "%lldm", v);
	json_object_set_new(o, k, json_string(buf));
}

/* The comma before each member of an object but its first. */
static void
tb_sep(struct textbuf *b, int *first)
{
	if (!*first)
		tb_lit(b, ",");
	*first = 0;
}

static void
tb_field(struct textbuf *b, int *first, const char *key, const char *v)
{
	/* A field jansson would refuse is left out, as before. */
	if (v == NULL || !utf8_valid(v))
		return;
	tb_sep(b, first);
	tb_str(b, key);
	tb_lit(b, ":");
	tb_str(b, v);
}

/* A field whose key is a literal, its text written as it is: a
 * Synchronize writes nine for each of thousands of containers. */
#define tb_named(b, first, key, v)					\
	tb_keyed(b, first, "\"" key "\":", sizeof "\"" key "\":" - 1, v)

static void
tb_keyed(struct textbuf *b, int *first, const char *keytext, size_t n,
    const char *v)
{
	/* A field jansson would refuse is left out, as before. */
	if (v == NULL || !utf8_valid(v))
		return;
	tb_sep(b, first);
	tb_add(b, keytext, n);
	tb_str(b, v);
}

/* CPU milli as "<v>m", none when unset. */
#define tb_milli(b, first, key, v)					\
	tb_milli_keyed(b, first, "\"" key "\":\"", sizeof "\"" key "\":\"" - 1, v)

static void
tb_milli_keyed(struct textbuf *b, int *first, const char *keytext, size_t n,
    long long v)
{
	if (v < 0)
		return;
	tb_sep(b, first);
	tb_add(b, keytext, n);
	tb_int(b, v);
	tb_lit(b, "m\"");
}

static void
tb_kv_object(struct textbuf *b, int *first, const char *key,
    const struct policy_kv *kv, int n)
{
	int	i, inner = 1;

	if (n <= 0)
		return;
	tb_sep(b, first);
	tb_str(b, key);
	tb_lit(b, ":{");
	for (i = 0; i < n; i++)
		if (utf8_valid(kv[i].key))
			tb_field(b, &inner, kv[i].key, kv[i].value);
	tb_lit(b, "}");
}

/*
 * A container as the policy reads it, written straight into b (no
 * jansson values: a Synchronize writes thousands); op, when not NULL,
 * goes last. With room, its metadata is written only when it fits there
 * (POLICY_META_BUDGET), and takes from it: a Synchronize's record stays
 * bounded, as the state is, whatever the pods put in their specs.
 */
static void
tb_cspec_event(struct textbuf *b, const struct cspec *c, int bare,
    const char *op)
{
	int	first = 1;

	tb_lit(b, "{");
	tb_named(b, &first, "id", c->id);
	tb_named(b, &first, "name", c->name);
	tb_named(b, &first, "pod", c->pod);
	tb_named(b, &first, "podUID", c->pod_uid);
	tb_named(b, &first, "podName", c->pod_name);
	tb_named(b, &first, "namespace", c->ns);
	tb_named(b, &first, "qos", qos_names[c->qos]);
	tb_milli(b, &first, "cpuRequest", c->request);
	tb_milli(b, &first, "cpuLimit", c->limit);
	if (!bare) {
		tb_kv_object(b, &first, "annotations", c->ann, c->nann);
		tb_kv_object(b, &first, "env", c->env, c->nenv);
		tb_kv_object(b, &first, "labels", c->labels, c->nlabels);
	}
	/* The kubelet's labels that copy their fields, as bits (a sync of
	 * thousands would otherwise write each four times over). */
	if (c->kube_labels != 0) {
		tb_sep(b, &first);
		tb_lit(b, "\"kubeLabels\":");
		tb_int(b, (long long)c->kube_labels);
	}
	if (!bare)
		tb_kv_object(b, &first, "podLabels", c->pod_labels,
		    c->npod_labels);
	if (c->mem_limit > 0) {
		tb_sep(b, &first);
		tb_lit(b, "\"memLimit\":");
		tb_int(b, c->mem_limit);
	}
	if (c->has_oom) {
		tb_sep(b, &first);
		tb_lit(b, "\"oomScoreAdj\":");
		tb_int(b, c->oom_adj);
	}
	tb_named(b, &first, "op", op);
	tb_lit(b, "}");
}

/*
 * A container as the policy reads it, written straight into b (no
 * jansson values: a Synchronize writes thousands); op, when not NULL,
 * goes last. With room, its metadata is written only when it fits there
 * (POLICY_META_BUDGET), and takes from it: a Synchronize's record stays
 * bounded, as the state is, whatever the pods put in their specs. read,
 * when not NULL, is the policy's copy of s, written rather than a copy
 * made again: cspec_copy gives the same of the same.
 */
static void
tb_spec_event(struct textbuf *b, const struct container_spec *s,
    const struct cspec *read, const char *op, size_t *room)
{
	struct cspec		 own;
	const struct cspec	*c = read;
	int			 bare = 0;

	if (c == NULL) {
		cspec_copy(&own, s);
		c = &own;
	}
	/* Past the room, written as cspec_trim leaves it: no labels,
	 * annotations or variables, the bits of the folded labels kept. */
	if (room != NULL && c->cost > *room)
		bare = 1;
	else if (room != NULL)
		*room -= c->cost;
	tb_cspec_event(b, c, bare, op);
	if (c == &own)
		cspec_clear(&own);
}

char *
event_create(const struct container_spec *s)
{
	struct textbuf	b;

	tb_init(&b, 512);
	tb_spec_event(&b, s, NULL, "create", NULL);
	return (tb_finish(&b, NULL));
}

char *
event_update(const char *id, long long request, long long limit,
    long long mem_limit)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("update"));
	set_string(o, "id", id);
	set_milli(o, "cpuRequest", request);
	set_milli(o, "cpuLimit", limit);
	if (mem_limit >= 0)
		json_object_set_new(o, "memLimit",
		    json_integer((json_int_t)mem_limit));
	return (text_of(o));
}

/* The runtime started a container (its cold start begins). */
char *
event_start(const char *id, long long at)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("start"));
	set_string(o, "id", id);
	json_object_set_new(o, "at", json_integer((json_int_t)at));
	return (text_of(o));
}

/* Cold starts due by at (ms of the wall clock) ended: the simulator's
 * clock moved to at. */
char *
event_cold(long long at)
{
	return (text_of(json_pack("{s:s, s:I}", "op", "time", "at",
	    (json_int_t)at)));
}

char *
event_remove(const char *id)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("remove"));
	set_string(o, "id", id);
	return (text_of(o));
}

char *
event_sync(const struct container_spec *specs, int n,
    const struct cspec *const *read)
{
	struct textbuf	b;
	size_t		room = POLICY_META_BUDGET;
	int		i;

	tb_init(&b, 256 + 512 * (size_t)(n > 0 ? n : 0));
	tb_lit(&b, "{\"op\":\"sync\",\"containers\":[");
	for (i = 0; i < n; i++) {
		if (i > 0)
			tb_lit(&b, ",");
		tb_spec_event(&b, &specs[i], read != NULL ? read[i] : NULL,
		    NULL, &room);
	}
	tb_lit(&b, "]}");
	return (tb_finish(&b, NULL));
}

static void
set_meta(json_t *o, const struct claim_meta *m)
{
	json_t	*a;
	int	 i;

	if (m == NULL)
		return;
	set_string(o, "namespace", m->ns);
	set_string(o, "name", m->name);
	if (!m->known)
		return;
	a = json_array();
	for (i = 0; i < m->npods; i++)
		if (m->pods[i] != NULL)
			json_array_append_new(a, json_string(m->pods[i]));
	json_object_set_new(o, "consumers", a);
}

char *
event_claim(const char *uid, const struct claim_result *res, int n,
    const struct claim_meta *m)
{
	json_t	*o = json_object(), *a = json_array(), *r;
	int	 i;

	for (i = 0; i < n; i++) {
		r = json_object();
		set_string(r, "device", res[i].device);
		set_string(r, "cpu", res[i].cpu);
		json_array_append_new(a, r);
	}
	json_object_set_new(o, "op", json_string("claim"));
	set_string(o, "uid", uid);
	json_object_set_new(o, "results", a);
	set_meta(o, m);
	return (text_of(o));
}

char *
event_release(const char *uid)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("release"));
	set_string(o, "uid", uid);
	return (text_of(o));
}

char *
event_consumers(const char *uid, const struct claim_meta *m)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("consumers"));
	set_string(o, "uid", uid);
	set_meta(o, m);
	return (text_of(o));
}

char *
event_reconfigure(const char *config, size_t len)
{
	json_t	*o = json_object(), *c;

	c = config != NULL ? json_loadb(config, len, JSON_DECODE_ANY, NULL) :
	    NULL;
	json_object_set_new(o, "op", json_string("reconfigure"));
	json_object_set_new(o, "config", c != NULL ? c : json_object());
	return (text_of(o));
}
