/*
 * event.c writes the events that reach the policy as JSON text in the
 * form topoaware-sim reads its scenarios (topoaware-sim(1)): what the
 * journal keeps of each change besides the grants it changed, so that a
 * node's history can be replayed offline. A container is written as the
 * policy keeps it: our annotations and DRA_CPUSET_ variables only, and the
 * pod's and the container's labels, within their caps.
 */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "event.h"
#include "policy_priv.h"
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

static json_t *
kv_object(const struct policy_kv *kv, int n)
{
	json_t	*o = json_object();
	json_t	*s;
	int	 i;

	for (i = 0; i < n; i++)
		if ((s = json_string(kv[i].value)) != NULL)
			json_object_set_new(o, kv[i].key, s);
	return (o);
}

static json_t *
spec_object(const struct container_spec *s)
{
	struct cspec	 c;
	json_t		*o = json_object();

	cspec_copy(&c, s);
	set_string(o, "id", c.id);
	set_string(o, "name", c.name);
	set_string(o, "pod", c.pod);
	set_string(o, "podUID", c.pod_uid);
	set_string(o, "podName", c.pod_name);
	set_string(o, "namespace", c.ns);
	json_object_set_new(o, "qos", json_string(qos_names[c.qos]));
	set_milli(o, "cpuRequest", c.request);
	set_milli(o, "cpuLimit", c.limit);
	if (c.nann > 0)
		json_object_set_new(o, "annotations", kv_object(c.ann, c.nann));
	if (c.nenv > 0)
		json_object_set_new(o, "env", kv_object(c.env, c.nenv));
	if (c.nlabels > 0)
		json_object_set_new(o, "labels", kv_object(c.labels,
		    c.nlabels));
	/* The kubelet's labels that copy their fields, as bits (a sync of
	 * thousands would otherwise write each four times over). */
	if (c.kube_labels != 0)
		json_object_set_new(o, "kubeLabels",
		    json_integer(c.kube_labels));
	if (c.npod_labels > 0)
		json_object_set_new(o, "podLabels", kv_object(c.pod_labels,
		    c.npod_labels));
	cspec_clear(&c);
	return (o);
}

char *
event_create(const struct container_spec *s)
{
	json_t	*o = spec_object(s);

	json_object_set_new(o, "op", json_string("create"));
	return (text_of(o));
}

char *
event_update(const char *id, long long request, long long limit)
{
	json_t	*o = json_object();

	json_object_set_new(o, "op", json_string("update"));
	set_string(o, "id", id);
	set_milli(o, "cpuRequest", request);
	set_milli(o, "cpuLimit", limit);
	return (text_of(o));
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
event_sync(const struct container_spec *specs, int n)
{
	json_t	*o = json_object(), *a = json_array();
	int	 i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, spec_object(&specs[i]));
	json_object_set_new(o, "op", json_string("sync"));
	json_object_set_new(o, "containers", a);
	return (text_of(o));
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
