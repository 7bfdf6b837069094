/*
 * test_event.c: the events the journal keeps of a create and of a
 * Synchronize are written straight as text (event.c); read back, each is
 * the object a jansson tree of the container, as the policy keeps it,
 * would be: odd and non-ASCII strings escaped, a field jansson would
 * refuse (not UTF-8) left out.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "event.h"
#include "policy_priv.h"

static const char *qos_names[] = { "BestEffort", "Burstable", "Guaranteed" };

/* The reference: jansson values, built from the kept container. */
static void
put(json_t *o, const char *k, const char *v)
{
	json_t	*s;

	if (v != NULL && (s = json_string(v)) != NULL)
		json_object_set_new(o, k, s);
}

static void
put_kv(json_t *o, const char *k, const struct policy_kv *kv, int n)
{
	json_t	*m;
	int	 i;

	if (n <= 0)
		return;
	m = json_object();
	for (i = 0; i < n; i++)
		put(m, kv[i].key, kv[i].value);
	json_object_set_new(o, k, m);
}

static json_t *
reference(const struct container_spec *s)
{
	struct cspec	 c;
	json_t		*o = json_object();
	char		 buf[32];

	cspec_copy(&c, s);
	put(o, "id", c.id);
	put(o, "name", c.name);
	put(o, "pod", c.pod);
	put(o, "podUID", c.pod_uid);
	put(o, "podName", c.pod_name);
	put(o, "namespace", c.ns);
	put(o, "qos", qos_names[c.qos]);
	if (c.request >= 0) {
		snprintf(buf, sizeof buf, "%lldm", c.request);
		put(o, "cpuRequest", buf);
	}
	if (c.limit >= 0) {
		snprintf(buf, sizeof buf, "%lldm", c.limit);
		put(o, "cpuLimit", buf);
	}
	put_kv(o, "annotations", c.ann, c.nann);
	put_kv(o, "env", c.env, c.nenv);
	put_kv(o, "labels", c.labels, c.nlabels);
	if (c.kube_labels != 0)
		json_object_set_new(o, "kubeLabels",
		    json_integer(c.kube_labels));
	put_kv(o, "podLabels", c.pod_labels, c.npod_labels);
	cspec_clear(&c);
	return (o);
}

static const struct policy_kv ann[] = {
	{ (char *)"cpu.preserve." ANNOTATION_NS "/container.c\"1", (char *)"true" },
	{ (char *)"prefer-isolated-cpus." ANNOTATION_NS "/pod", (char *)"fa\\lse" },
	{ (char *)"memory-type." ANNOTATION_NS, (char *)"dram,\xe2\x82\xac" },
	{ (char *)"bad-utf8." ANNOTATION_NS, (char *)"x\xff\xfe" },
	{ (char *)"not-ours.example.com", (char *)"kept out" },
};
static const struct policy_kv env[] = {
	{ (char *)"DRA_CPUSET_u1", (char *)"0-3" },
	{ (char *)"PATH", (char *)"/bin" },
};
static const struct policy_kv labels[] = {
	{ (char *)"io.kubernetes.container.name", (char *)"c\"1" },
	{ (char *)"io.kubernetes.pod.name", (char *)"web-0" },
	{ (char *)"app", (char *)"line\nbreak\t\x01" },
	{ (char *)"emoji", (char *)"\xf0\x9f\x98\x80" },
};
static const struct policy_kv pod_labels[] = {
	{ (char *)"tier", (char *)"front\\end" },
	{ (char *)"bad", (char *)"\xc3\x28" },
};

static void
spec_of(struct container_spec *s, const char *id, int odd)
{
	memset(s, 0, sizeof *s);
	s->id = id;
	s->name = "c\"1";
	s->pod = "pod-\x7f";
	s->pod_uid = odd ? "uid-\xe9" : "uid-1";	/* cleaned when kept */
	s->pod_name = "web-0";
	s->namespace = "team/\xc3\xa9";
	s->qos = odd ? QOS_GUARANTEED : QOS_BESTEFFORT;
	s->cpu_request = odd ? 2000 : -1;
	s->cpu_limit = odd ? 2000 : -1;
	if (odd) {
		s->annotations = ann;
		s->nannotations = sizeof ann / sizeof ann[0];
		s->env = env;
		s->nenv = sizeof env / sizeof env[0];
		s->labels = labels;
		s->nlabels = sizeof labels / sizeof labels[0];
		s->pod_labels = pod_labels;
		s->npod_labels = sizeof pod_labels / sizeof pod_labels[0];
	}
}

static json_t *
parse(const char *text)
{
	json_error_t	 err;
	json_t		*doc = json_loads(text, 0, &err);

	cr_assert_not_null(doc, "not JSON: %s: %s", err.text, text);
	return (doc);
}

Test(event, create_is_the_kept_container)
{
	struct container_spec	 s;
	json_t			*want, *got;
	char			*text, *w;

	/* A peer's raw id is not cleaned to UTF-8 as what is kept is. */
	spec_of(&s, "ctr-\xff", 1);
	text = event_create(&s);
	got = parse(text);
	want = reference(&s);
	json_object_set_new(want, "op", json_string("create"));
	w = json_dumps(want, JSON_COMPACT);
	cr_assert(json_equal(got, want), "got %s, want %s", text, w);
	/* A field jansson would refuse is out; the kept ones are in. */
	cr_assert_null(json_object_get(got, "id"));
	cr_assert_str_eq(json_string_value(json_object_get(got, "op")),
	    "create");
	cr_assert_not_null(json_object_get(json_object_get(got,
	    "annotations"), "memory-type." ANNOTATION_NS));
	free(w);
	json_decref(want);
	json_decref(got);
	free(text);
}

Test(event, sync_lists_every_container)
{
	struct container_spec	 s[3];
	json_t			*got, *a;
	char			*text, id[3][8];
	int			 i;

	for (i = 0; i < 3; i++) {
		snprintf(id[i], sizeof id[i], "c%d", i);
		spec_of(&s[i], id[i], i == 1);
	}
	text = event_sync(s, 3, NULL);
	got = parse(text);
	cr_assert_str_eq(json_string_value(json_object_get(got, "op")),
	    "sync");
	a = json_object_get(got, "containers");
	cr_assert_eq(json_array_size(a), 3);
	for (i = 0; i < 3; i++) {
		json_t	*want = reference(&s[i]);

		cr_assert(json_equal(json_array_get(a, (size_t)i), want),
		    "container %d of %s", i, text);
		json_decref(want);
	}
	json_decref(got);
	free(text);
	text = event_sync(NULL, 0, NULL);
	got = parse(text);
	cr_assert_eq(json_array_size(json_object_get(got, "containers")), 0);
	json_decref(got);
	free(text);
}
